#!/usr/bin/env bash
# Builds docker/Dockerfile with podman (docker format, so the HEALTHCHECK is kept), with this
# machine's npm registry as the build argument NPM_CONFIG_REGISTRY and, when npm here trusts a CA
# file of its own (`npm config get cafile`), that file as the build secret `npm_ca`.
#
#   docker/build.sh [TAG]              default TAG: session-store
#   docker/build.sh --print-args [TAG] print the podman build arguments, build nothing
#
# NODE_IMAGE names the base (default node:20-slim; docker/stand-in-base.sh builds a local one).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=docker/podman.sh
source "$ROOT/docker/podman.sh"

PRINT=""
if [[ "${1:-}" == "--print-args" ]]; then PRINT=yes; shift; fi
TAG="${1:-session-store}"
NODE_IMAGE="${NODE_IMAGE:-node:20-slim}"

REGISTRY="$(npm config get registry)"
CAFILE="$(npm config get cafile)"
podman_limits
ARGS=(build --format docker --network host "${LIMITS[@]}" -f "$ROOT/docker/Dockerfile" -t "$TAG"
  --build-arg "NODE_IMAGE=$NODE_IMAGE" --build-arg "NPM_CONFIG_REGISTRY=$REGISTRY")
if [[ -n "$CAFILE" && "$CAFILE" != null && -s "$CAFILE" ]]; then ARGS+=(--secret "id=npm_ca,src=$CAFILE"); fi
ARGS+=("$ROOT")

if [[ -n "$PRINT" ]]; then printf '%s\n' "${ARGS[@]}"; exit 0; fi
podman_usable || { echo "build: FAIL: podman cannot run" >&2; exit 1; }
echo "build: ${PODMAN[*]} ${ARGS[*]}"
start=$SECONDS
"${PODMAN[@]}" "${ARGS[@]}"
echo "build: built $TAG on $NODE_IMAGE in $((SECONDS - start)) s"
