#!/bin/sh
# The image's entry point: raises the open-files soft limit to the hard one, then replaces
# itself with the command (exec), so node is PID 1 and receives SIGTERM itself.
# Every socket and every open session file takes a descriptor, and a container starts with the
# engine's soft limit (often 1024, below MAX_CONNECTIONS' default of 2048 with tokens) even when
# its hard limit allows far more. Where the limit cannot be raised, the server starts anyway.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || echo "session-store-entrypoint: open-files limit stays at $(ulimit -n)" >&2
exec "$@"
