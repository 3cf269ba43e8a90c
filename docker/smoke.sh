#!/usr/bin/env bash
# Smoke test of the image's start-up without a Docker engine: runs the exact start command of
# docker/Dockerfile (ENTRYPOINT + CMD of the final stage, parsed from the file so the two cannot
# drift) from a fresh `npm run build`, with the final stage's ENV, in a copy of the image's
# WORKDIR (package.json, node_modules, dist/, ui/), against a temporary DATA_DIR. When the image
# names an AUTH_TOKENS_FILE, the file is moved under the temporary DATA_DIR and its first token
# is created with the image's own `token create` (as README "Docker" says), and the API must
# answer 401 without it and 200 with it. It waits for GET /readyz to answer 200, runs the
# HEALTHCHECK command, sends SIGTERM and requires exit code 0 and a released DATA_DIR lock.
#
#   docker/smoke.sh                  run the smoke test (exit 0 = passed)
#   docker/smoke.sh --print-command  print the parsed start command and exit
#
# SMOKE_PORT overrides the image's PORT (the test suite passes a free port). For testing this
# script itself: SMOKE_DOCKERFILE reads another Dockerfile, SMOKE_SKIP_BUILD=1 skips the build.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DOCKERFILE="${SMOKE_DOCKERFILE:-$ROOT/docker/Dockerfile}"

fail () { echo "smoke: FAIL: $*" >&2; exit 1; }

# Prints `env KEY=value`, `cmd <arg>` (ENTRYPOINT + CMD), `entry <arg>` (ENTRYPOINT alone) and
# `health <arg>` lines for the final stage; fails on a shell-form ENTRYPOINT/CMD/HEALTHCHECK (a
# shell as PID 1 would not pass SIGTERM on).
PARSER='
const text = require("node:fs").readFileSync(process.argv[1], "utf8")
const lines = text.replace(/\\\r?\n/g, " ").split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith("#"))
const start = lines.map((l) => /^FROM\s/i.test(l)).lastIndexOf(true)
if (start === -1) throw new Error("no FROM")
const env = new Map()
let entrypoint, cmd, health
const execForm = (what, rest) => {
  let args
  try { args = JSON.parse(rest) } catch {}
  if (!Array.isArray(args) || args.length === 0 || !args.every((a) => typeof a === "string")) {
    throw new Error(`${what} is not in exec form (a JSON array): ${rest}`)
  }
  return args
}
for (const line of lines.slice(start + 1)) {
  const [, word, rest] = /^(\S+)\s*(.*)$/.exec(line)
  const kw = word.toUpperCase()
  if (kw === "ENV") {
    for (const m of rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|\S*)/g)) env.set(m[1], m[3] ?? m[2])
  } else if (kw === "ENTRYPOINT") entrypoint = execForm(kw, rest)
  else if (kw === "CMD") cmd = execForm(kw, rest)
  else if (kw === "HEALTHCHECK") {
    const m = /(?:^|\s)CMD\s+(.*)$/.exec(rest)
    if (m === null) throw new Error("HEALTHCHECK has no CMD")
    health = execForm("HEALTHCHECK CMD", m[1])
  }
}
if (entrypoint === undefined || cmd === undefined) throw new Error("the final stage needs both ENTRYPOINT and CMD")
for (const [k, v] of env) console.log(`env ${k}=${v}`)
for (const a of [...entrypoint, ...cmd]) console.log(`cmd ${a}`)
for (const a of entrypoint) console.log(`entry ${a}`)
for (const a of health ?? []) console.log(`health ${a}`)
'

ENVS=(); CMD=(); ENTRY=(); HEALTH=()
PARSED="$(node -e "$PARSER" "$DOCKERFILE")" || fail "cannot parse $DOCKERFILE"
while IFS= read -r line; do
  case "$line" in
    env\ *) ENVS+=("${line#env }") ;;
    cmd\ *) CMD+=("${line#cmd }") ;;
    entry\ *) ENTRY+=("${line#entry }") ;;
    health\ *) HEALTH+=("${line#health }") ;;
  esac
done <<< "$PARSED"

if [[ "${1:-}" == "--print-command" ]]; then
  echo "${CMD[*]}"
  exit 0
fi
[[ ${#HEALTH[@]} -gt 0 ]] || fail "no HEALTHCHECK CMD in $DOCKERFILE"

if [[ "${SMOKE_SKIP_BUILD:-}" != "1" ]]; then
  echo "smoke: building (npm run build)"
  (cd "$ROOT" && npm run build --silent) || fail "npm run build failed"
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/ss-smoke-XXXXXX")"
DATA_DIR="$TMP/data"
LOG="$TMP/server.log"
PID=""
cleanup () {
  if [[ -n "$PID" ]] && kill -0 "$PID" 2>/dev/null; then kill -KILL "$PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$DATA_DIR"

# The image's WORKDIR holds package.json, node_modules, dist/ and ui/ only: run from such a copy, so
# that a start-up reading anything else of the repository fails here as it would in the image.
# (node_modules is linked, dev dependencies included; test/docker checks that dist/ imports
# production dependencies only.)
APP="$TMP/app"
mkdir -p "$APP"
cp "$ROOT/package.json" "$ROOT/package-lock.json" "$APP/"
if [[ -d "$ROOT/dist" ]]; then cp -R "$ROOT/dist" "$APP/dist"; fi
cp -R "$ROOT/ui" "$APP/ui"
ln -s "$ROOT/node_modules" "$APP/node_modules"

# The image's environment, with DATA_DIR on the temp dir and, if asked, another port. A token
# file the image keeps under its DATA_DIR moves along to the same place under the temp dir.
RUN_ENV=()
PORT=""
IMAGE_DATA_DIR=""
TOKENS_FILE=""
for kv in "${ENVS[@]}"; do
  case "$kv" in
    DATA_DIR=*) IMAGE_DATA_DIR="${kv#DATA_DIR=}" ;;
    PORT=*) PORT="${kv#PORT=}" ;;
    AUTH_TOKENS_FILE=*) TOKENS_FILE="${kv#AUTH_TOKENS_FILE=}" ;;
    *) RUN_ENV+=("$kv") ;;
  esac
done
PORT="${SMOKE_PORT:-${PORT:-8787}}"
RUN_ENV+=("DATA_DIR=$DATA_DIR" "PORT=$PORT")
if [[ -n "$TOKENS_FILE" ]]; then
  if [[ -n "$IMAGE_DATA_DIR" && "$TOKENS_FILE" == "$IMAGE_DATA_DIR"/* ]]; then
    TOKENS_FILE="$DATA_DIR/${TOKENS_FILE#"$IMAGE_DATA_DIR"/}"
  else
    TOKENS_FILE="$TMP/$(basename "$TOKENS_FILE")"
  fi
  RUN_ENV+=("AUTH_TOKENS_FILE=$TOKENS_FILE")
fi

cd "$APP"
SECRET=""
if [[ -n "$TOKENS_FILE" ]]; then
  SECRET="$(env "${RUN_ENV[@]}" "${ENTRY[@]}" token create --tenant default --scopes read --name smoke 2>"$TMP/token.err")" \
    || { cat "$TMP/token.err" >&2; fail "'token create' failed"; }
  [[ "$SECRET" == sst_* ]] || fail "'token create' did not print a secret"
  echo "smoke: created a token in AUTH_TOKENS_FILE with '${ENTRY[*]} token create'"
fi

echo "smoke: starting '${CMD[*]}' with ${RUN_ENV[*]}"
# `env` execs the command, so $! is the server's own pid, as PID 1 would be in the container.
env "${RUN_ENV[@]}" "${CMD[@]}" > "$LOG" 2>&1 &
PID=$!

ready=""
for _ in $(seq 1 150); do
  kill -0 "$PID" 2>/dev/null || { cat "$LOG" >&2; fail "the server exited before it was ready"; }
  if node -e "fetch('http://127.0.0.1:$PORT/readyz').then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"; then
    ready=yes; break
  fi
  sleep 0.2
done
[[ -n "$ready" ]] || { cat "$LOG" >&2; fail "GET /readyz did not answer 200 within 30 s"; }
echo "smoke: GET /readyz answered 200"

env "${RUN_ENV[@]}" "${HEALTH[@]}" || fail "the HEALTHCHECK command failed against the running server"
echo "smoke: HEALTHCHECK command passed"

if [[ -n "$SECRET" ]]; then
  status () { node -e "fetch('http://127.0.0.1:$PORT/v1/sessions', { headers: process.argv[1] ? { authorization: 'Bearer ' + process.argv[1] } : {} }).then((r) => console.log(r.status), () => console.log(0))" "${1:-}"; }
  [[ "$(status)" == "401" ]] || fail "GET /v1/sessions without a token did not answer 401"
  [[ "$(status "$SECRET")" == "200" ]] || fail "GET /v1/sessions with the token did not answer 200"
  echo "smoke: GET /v1/sessions answered 401 without a token and 200 with it"
fi

kill -TERM "$PID"
# Bash reaps the exited child on its own (SIGCHLD), so `kill -0` fails once it is gone; `wait`
# then returns the saved exit code.
for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.2; done
kill -0 "$PID" 2>/dev/null && { cat "$LOG" >&2; fail "the server did not exit within 20 s of SIGTERM"; }
code=0
wait "$PID" || code=$?
PID=""
[[ "$code" -eq 0 ]] || { cat "$LOG" >&2; fail "exit code after SIGTERM was $code, expected 0"; }
[[ ! -e "$DATA_DIR/.lock" ]] || fail "the DATA_DIR lock was not released"
grep -q '"session-store stopped"' "$LOG" || { cat "$LOG" >&2; fail "no 'session-store stopped' log line"; }
echo "smoke: ok (SIGTERM -> exit 0, lock released)"
