#!/usr/bin/env bash
# Smoke test of docker/compose.yaml's `postgres` profile with podman-compose: the database, two
# server replicas of the built image on it, nginx in front on 127.0.0.1:8788 (docker/nginx.conf).
#   - every service's own health check passes (`podman healthcheck run`: pg_isready, the image's
#     /readyz, wget through nginx);
#   - a session created through nginx, with an assistant message, is read back through it, and
#     requests reach both replicas;
#   - with one replica stopped, nginx serves every request from the other, the same session.
# Where postgres:16-alpine and nginx:1.27-alpine cannot be pulled, POSTGRES_IMAGE and NGINX_IMAGE
# name stand-ins; unset, they are built here from docker/stand-in/*.Containerfile on BASE_IMAGE
# (any Debian bookworm image; default NODE_IMAGE, else localhost/node-stand-in:20-slim, which
# docker/stand-in-base.sh builds).
#
#   docker/compose-smoke.sh            the image `session-store` must be built (docker/build.sh)
#
# Differences from Docker Compose, which podman-compose 1.0.3 (Debian bookworm) has: it knows no
# `profiles` (naming `lb` starts it and what it depends on, as `--profile postgres up lb` does) and
# starts dependencies in order without waiting for `condition: service_healthy`; the replicas
# wait for the database themselves (their restart policy starts them again). Without systemd
# podman runs no health check on a timer, so this script runs each with `podman healthcheck run`.
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=docker/podman.sh
source "$DIR/podman.sh"

PROJECT="ss-compose-smoke"
LB="http://127.0.0.1:8788"
BASE_IMAGE="${BASE_IMAGE:-${NODE_IMAGE:-localhost/node-stand-in:20-slim}}"
fail () { echo "compose-smoke: FAIL: $*" >&2; exit 1; }
say () { echo "compose-smoke: $*"; }

command -v podman-compose >/dev/null || fail "podman-compose is not installed (apt-get install podman-compose)"
podman_usable || fail "podman cannot run"
"${PODMAN[@]}" image exists session-store || fail "no image session-store (build it with docker/build.sh)"
podman_limits

stand_in () {
  local name="$1"
  "${PODMAN[@]}" build --format docker --network host "${LIMITS[@]}" --build-arg "BASE=$BASE_IMAGE" \
    -f "$DIR/stand-in/$name.Containerfile" -t "localhost/$name-stand-in" "$DIR/stand-in" >/dev/null \
    || fail "building the $name stand-in on $BASE_IMAGE failed"
  say "built localhost/$name-stand-in on $BASE_IMAGE"
}
if [[ -z "${POSTGRES_IMAGE:-}" ]]; then stand_in postgres; export POSTGRES_IMAGE=localhost/postgres-stand-in; fi
if [[ -z "${NGINX_IMAGE:-}" ]]; then stand_in nginx; export NGINX_IMAGE=localhost/nginx-stand-in; fi

LOG="$(mktemp "${TMPDIR:-/tmp}/compose-smoke-XXXXXX.log")"
COMPOSE=(podman-compose -p "$PROJECT" -f "$DIR/compose.yaml" --podman-args "${PODMAN[*]:1}" --podman-run-args "${LIMITS[*]}")
ctr () { echo "${PROJECT}_$1_1"; }
cleanup () {
  # down -v removes the named volumes; the replicas' anonymous /data volumes and the network
  # are removed here.
  local volumes
  volumes="$("${PODMAN[@]}" inspect --format '{{range .Mounts}}{{if eq .Type "volume"}}{{println .Name}}{{end}}{{end}}' \
    "$(ctr session-store-pg-1)" "$(ctr session-store-pg-2)" 2>/dev/null || true)"
  "${COMPOSE[@]}" down -v >>"$LOG" 2>&1 || true
  for v in $volumes; do "${PODMAN[@]}" volume rm -f "$v" >/dev/null 2>&1 || true; done
  "${PODMAN[@]}" network rm -f "${PROJECT}_default" >/dev/null 2>&1 || true
  rm -f "$LOG"
}
trap cleanup EXIT

"${COMPOSE[@]}" up -d lb >"$LOG" 2>&1 || { cat "$LOG" >&2; fail "podman-compose up -d lb failed"; }
say "podman-compose up -d lb: $(grep -c '^podman run ' "$LOG") containers started"

# Prints the status, a newline and the body of one request.
http () {
  node -e '
    const [method, url, body] = process.argv.slice(1)
    fetch(url, { method, headers: { "content-type": "application/json" }, body: body || undefined })
      .then(async (r) => console.log(r.status + "\n" + await r.text()), () => console.log("0\n"))' "$@"
}
healthy () { "${PODMAN[@]}" healthcheck run "$(ctr "$1")" >/dev/null 2>&1; }

started=$SECONDS
HEALTH=()
for service in db session-store-pg-1 session-store-pg-2 lb; do
  until healthy "$service"; do
    if (( SECONDS - started > 90 )); then "${PODMAN[@]}" logs "$(ctr "$service")" >&2; fail "$service is not healthy after 90 s"; fi
    sleep 1
  done
  HEALTH+=("$service after $((SECONDS - started)) s ($("${PODMAN[@]}" inspect --format '{{.RestartCount}}' "$(ctr "$service")") restarts)")
done
say "healthy: $(IFS=,; echo "${HEALTH[*]}" | sed 's/,/, /g')"

CREATED="$(http POST "$LB/v1/sessions" '{"cwd":"/compose-smoke"}')"
[[ "$(head -n 1 <<< "$CREATED")" == 201 ]] || fail "POST /v1/sessions through nginx: $CREATED"
ID="$(tail -n +2 <<< "$CREATED" | node -e 'let s = ""; process.stdin.on("data", (c) => { s += c }).on("end", () => console.log(JSON.parse(s).header.id))')"
ENTRIES='{"entries":[{"type":"message","message":{"role":"user","content":"hello"}},{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hi from a replica"}]}}]}'
APPENDED="$(http POST "$LB/v1/sessions/$ID/entries" "$ENTRIES")"
[[ "$(head -n 1 <<< "$APPENDED")" == 201 && "$APPENDED" == *'"persisted":true'* ]] || fail "append through nginx: $APPENDED"
EXPORT="$(http GET "$LB/v1/sessions/$ID/export")"
[[ "$EXPORT" == 200$'\n'*'hi from a replica'* ]] || fail "export through nginx: $EXPORT"

# Each read through nginx answers the same; nginx spreads them over both replicas.
read_all () {
  for _ in $(seq 1 "$1"); do
    [[ "$(http GET "$LB/v1/sessions/$ID/export")" == "$EXPORT" ]] || fail "a read through nginx answered otherwise: $2"
  done
}
read_all 10 "both replicas up"
served () { "${PODMAN[@]}" logs "$(ctr "$1")" 2>&1 | grep -c "\"url\":\"/v1/sessions/$ID" || true; }
ONE="$(served session-store-pg-1)"; TWO="$(served session-store-pg-2)"
[[ "$ONE" -gt 0 && "$TWO" -gt 0 ]] || fail "nginx did not spread requests: replica 1 served $ONE, replica 2 $TWO"
say "session $ID created and read through nginx; replica 1 served $ONE requests, replica 2 $TWO"

"${PODMAN[@]}" stop -t 30 "$(ctr session-store-pg-1)" >/dev/null 2>&1
say "stopped replica 1, exit $("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$(ctr session-store-pg-1)")"
BEFORE="$(served session-store-pg-2)"
started=$SECONDS
read_all 6 "replica 1 stopped"
took=$((SECONDS - started))
AFTER="$(served session-store-pg-2)"
[[ $((AFTER - BEFORE)) -eq 6 ]] || fail "with replica 1 stopped, replica 2 served $((AFTER - BEFORE)) of 6 reads"
(( took <= 15 )) || fail "with replica 1 stopped, 6 reads through nginx took $took s"
say "replica 1 stopped: replica 2 served all 6 reads through nginx, in $took s"
say "ok"
