#!/usr/bin/env bash
# Smoke test of the built image with podman (docker/build.sh builds it; .ci/run runs both):
#   - the image keeps no npm registry, CA file or build secret: no `registry`/`cafile` in any
#     npmrc, no /run/secrets/npm_ca, no NPM_CONFIG_* in its environment or history;
#   - it names a non-root user, and the server runs as that uid, as PID 1 (node itself);
#   - its open-files soft limit is raised to the hard one (started with a soft limit of 1024);
#   - a first token made with the image's own `token create` in the volume; the API answers 401
#     without it and 200 with it;
#   - `podman healthcheck run` passes (the image's HEALTHCHECK, kept in the docker format);
#   - a session with an assistant message survives a restart on the same volume, byte for byte;
#   - `podman stop` (SIGTERM) ends it with exit code 0 within SMOKE_STOP_BOUND seconds (10),
#     below the stop timeout, so podman never had to kill it.
#
#   docker/smoke.sh [IMAGE]            default IMAGE: session-store
#
# PODMAN_BIN and PODMAN_OPTS as in docker/podman.sh; SMOKE_STOP_BOUND as above.
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=docker/podman.sh
source "$DIR/podman.sh"

IMAGE="${1:-session-store}"
STOP_BOUND="${SMOKE_STOP_BOUND:-10}"
NAME="ss-smoke-$$"
VOLUME="ss-smoke-$$"

fail () { echo "smoke: FAIL: $*" >&2; exit 1; }
# Podman starts a systemd timer for the HEALTHCHECK's interval; without systemd it logs an error
# and starts none (`podman healthcheck run` below runs the check itself).
no_timer_noise () { grep -v 'unable to get systemd connection' >&2 || true; }
pm () { "${PODMAN[@]}" "$@" 2> >(no_timer_noise); }
say () { echo "smoke: $*"; }
now_ms () { echo $(( $(date +%s%N) / 1000000 )); }
cleanup () {
  pm rm -f -t 0 "$NAME" >/dev/null 2>&1 || true
  pm volume rm -f "$VOLUME" >/dev/null 2>&1 || true
}

podman_usable || fail "podman cannot run"
pm image exists "$IMAGE" || fail "no image $IMAGE (build it with docker/build.sh)"
inspect () { pm image inspect --format "$1" "$IMAGE"; }
say "image $IMAGE: $(( $(inspect '{{.Size}}') / 1000000 )) MB"

# ── what the image is, before it runs ─────────────────────────────────────────────────────
USER_NAME="$(inspect '{{.Config.User}}')"
[[ -n "$USER_NAME" && "$USER_NAME" != root && "$USER_NAME" != 0 && "$USER_NAME" != 0:* ]] \
  || fail "the image runs as root (USER '${USER_NAME}')"
[[ "$(inspect '{{if .HealthCheck}}{{join .HealthCheck.Test " "}}{{end}}')" == CMD* ]] \
  || fail "the image has no HEALTHCHECK (build with --format docker)"
if inspect '{{range .Config.Env}}{{println .}}{{end}}' | grep -i -E '^npm_config_'; then
  fail "the image's environment sets npm configuration"
fi
if pm history --no-trunc --format '{{.CreatedBy}}' "$IMAGE" | grep -i -E 'npm_config_|npm_ca'; then
  fail "the image's history names the npm registry or CA"
fi
# Every npmrc of the image, the global one included, and the secret's mount point.
podman_limits
LEFT="$(pm run --rm "${LIMITS[@]}" --network none --entrypoint sh "$IMAGE" -c '
  find / -xdev \( -name npmrc -o -name .npmrc \) -type f -exec grep -H -i -E "^[[:space:]]*((registry|cafile|ca)[[:space:]]*=|//)" {} +
  [ ! -e /run/secrets/npm_ca ] || echo "/run/secrets/npm_ca exists"
  true' 2>/dev/null)" || fail "cannot run a shell in $IMAGE"
[[ -z "$LEFT" ]] || fail "npm settings left in the image: $LEFT"
say "no npm registry, CA file or secret left in the image; USER $USER_NAME; HEALTHCHECK present"

# ── a running container ───────────────────────────────────────────────────────────────────
trap cleanup EXIT
pm volume create "$VOLUME" >/dev/null
PORT="$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })")"
BASE="http://127.0.0.1:$PORT"
podman_limits 1024
HARD_FILES="$(ulimit -Hn)"

SECRET="$(pm run --rm "${LIMITS[@]}" -v "$VOLUME:/data" "$IMAGE" token create --tenant default --scopes write --name smoke)" \
  || fail "'token create' in the image failed"
[[ "$SECRET" == sst_* ]] || fail "'token create' did not print a secret"

# Prints the status, a newline and the body of one request (SECRET as the bearer token if set).
http () {
  node -e '
    const [method, url, body] = process.argv.slice(1)
    const headers = { "content-type": "application/json" }
    if (process.env.SECRET) headers.authorization = "Bearer " + process.env.SECRET
    fetch(url, { method, headers, body: body || undefined })
      .then(async (r) => console.log(r.status + "\n" + await r.text()), () => console.log("0\n"))' "$@"
}
status () { http "$@" | head -n 1; }
body () { http "$@" | tail -n +2; }

wait_ready () {
  local started
  started="$(now_ms)"
  for _ in $(seq 1 150); do
    [[ "$(pm inspect --format '{{.State.Running}}' "$NAME")" == true ]] \
      || { pm logs "$NAME" >&2; fail "the container exited before it was ready"; }
    if [[ "$(SECRET='' status GET "$BASE/readyz")" == 200 ]]; then
      say "GET /readyz answered 200 $(( $(now_ms) - started )) ms after the container started"; return
    fi
    sleep 0.2
  done
  pm logs "$NAME" >&2
  fail "GET /readyz did not answer 200 within 30 s"
}

# $1: how many times the server has stopped by now (the log keeps every run's lines).
stop_cleanly () {
  local started took code stops
  started="$(now_ms)"
  pm stop -t $((STOP_BOUND * 3)) "$NAME" >/dev/null
  took=$(( $(now_ms) - started ))
  code="$(pm inspect --format '{{.State.ExitCode}}' "$NAME")"
  [[ "$code" == 0 ]] || { pm logs "$NAME" >&2; fail "exit code after SIGTERM was $code, expected 0"; }
  [[ "$took" -le $((STOP_BOUND * 1000)) ]] || fail "the server took $took ms to stop on SIGTERM, more than $STOP_BOUND s"
  stops="$(pm logs "$NAME" 2>&1 | grep -c '"session-store stopped"' || true)"
  [[ "$stops" == "$1" ]] || fail "$stops 'session-store stopped' log lines after $1 stops"
  say "podman stop (SIGTERM) -> exit 0 in $took ms"
}

# A soft open-files limit of 1024 under the hard one: the entry point must raise it.
pm run -d --name "$NAME" "${LIMITS[@]}" -v "$VOLUME:/data" -p "127.0.0.1:$PORT:8787" "$IMAGE" >/dev/null \
  || fail "podman run failed"
wait_ready

# PID 1 is node, with the image's uid (not 0), and its soft open-files limit is the hard one.
PROC="$(pm exec "$NAME" sh -c 'tr "\0" " " < /proc/1/cmdline; echo; grep "^Uid:" /proc/1/status; grep "^Max open files" /proc/1/limits')"
read -r -a CMDLINE <<< "$(sed -n 1p <<< "$PROC")"
read -r _ RUID EUID_ _ <<< "$(sed -n 2p <<< "$PROC")"
read -r _ _ _ SOFT HARD _ <<< "$(sed -n 3p <<< "$PROC")"
[[ "${CMDLINE[0]}" == node ]] || fail "PID 1 is '${CMDLINE[*]}', not node (a shell in between would not pass SIGTERM on)"
[[ "$RUID" != 0 && "$EUID_" != 0 ]] || fail "the server runs as root (uid $RUID/$EUID_)"
[[ "$SOFT" == "$HARD" && "$HARD" == "$HARD_FILES" ]] || fail "open files: soft $SOFT, hard $HARD; expected both $HARD_FILES"
say "PID 1 is '${CMDLINE[*]}' as uid $RUID; open files soft $SOFT = hard $HARD (started at soft 1024)"

pm healthcheck run "$NAME" >/dev/null 2>&1 || fail "podman healthcheck run failed"
say "podman healthcheck run: healthy"

[[ "$(SECRET='' status GET "$BASE/v1/sessions")" == 401 ]] || fail "GET /v1/sessions without a token did not answer 401"
export SECRET
[[ "$(status GET "$BASE/v1/sessions")" == 200 ]] || fail "GET /v1/sessions with the token did not answer 200"
say "GET /v1/sessions answered 401 without a token and 200 with it"

CREATED="$(http POST "$BASE/v1/sessions" '{"cwd":"/smoke","title":"smoke"}')"
[[ "$(head -n 1 <<< "$CREATED")" == 201 ]] || fail "POST /v1/sessions: $CREATED"
ID="$(tail -n +2 <<< "$CREATED" | node -e 'let s = ""; process.stdin.on("data", (c) => { s += c }).on("end", () => console.log(JSON.parse(s).header.id))')"
ENTRIES='{"entries":[{"type":"message","message":{"role":"user","content":"hello"}},{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hi from the image"}]}}]}'
APPENDED="$(http POST "$BASE/v1/sessions/$ID/entries" "$ENTRIES")"
[[ "$(head -n 1 <<< "$APPENDED")" == 201 && "$APPENDED" == *'"persisted":true'* ]] || fail "append: $APPENDED"
BEFORE="$(body GET "$BASE/v1/sessions/$ID/export")"
[[ "$BEFORE" == *'hi from the image'* ]] || fail "the export lacks the assistant message: $BEFORE"
say "session $ID: a user and an assistant message appended, persisted"

stop_cleanly 1
pm start "$NAME" >/dev/null || fail "podman start failed"
wait_ready
AFTER="$(body GET "$BASE/v1/sessions/$ID/export")"
[[ "$AFTER" == "$BEFORE" ]] || fail "after the restart the session reads back as: $AFTER"
say "after a restart the session reads back the same ($(wc -l <<< "$AFTER") lines)"
stop_cleanly 2
say "ok"
