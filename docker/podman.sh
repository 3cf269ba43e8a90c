# Sourced by the image scripts (docker/stand-in-base.sh, docker/build.sh, docker/smoke.sh): the
# podman command line they share, so that every step uses the same runtime and image store.
#
# PODMAN_OPTS: podman's global options. The default suits podman as root on a host without
# systemd whose cgroups are in hybrid mode (v1 controllers): crun refuses those, runc runs them.
# Set PODMAN_OPTS="" to use podman's own configuration. PODMAN_BIN names another podman binary.
# shellcheck shell=bash
read -r -a PODMAN <<< "${PODMAN_BIN:-podman} ${PODMAN_OPTS-"--runtime runc --cgroup-manager cgroupfs"}"

# Resource limits for `podman build` and `podman run`. Podman's defaults for root (file
# descriptors and processes in the millions) exceed what a host inside a container allows, and
# then the OCI runtime fails to start anything. The open-files limit is the caller's hard one;
# the process limit is the hard one, capped at the kernel's pid_max (a larger one is refused).
podman_limits () {
  local files procs pids
  files="$(ulimit -Hn)"
  procs="$(ulimit -Hu)"
  pids="$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 32768)"
  if [[ "$procs" == unlimited || "$procs" -gt "$pids" ]]; then procs="$pids"; fi
  LIMITS=(--ulimit "nproc=$procs:$procs")
  if [[ "$files" != unlimited ]]; then LIMITS+=(--ulimit "nofile=${1:-$files}:$files"); fi
}

# Fails with a clear message when podman is missing or cannot start a container here.
podman_usable () {
  if ! command -v "${PODMAN[0]}" >/dev/null 2>&1; then
    echo "podman is not installed (apt-get install podman buildah runc): no ${PODMAN[0]}" >&2
    return 1
  fi
  if ! "${PODMAN[@]}" info >/dev/null 2>"${TMPDIR:-/tmp}/podman-info.err"; then
    echo "podman cannot run here ('${PODMAN[*]} info' failed):" >&2
    cat "${TMPDIR:-/tmp}/podman-info.err" >&2
    return 1
  fi
}
