#!/usr/bin/env bash
# bench/rooms/idle.sh - idle sockets on one daemon (bench/rooms/README.md): for each count in COUNTS a fresh daemon of
# service workers (gateway only, --consume off) holds that many /ws clients opened by idle.mjs (PER_CHILD a process,
# each process on its own loopback source address); prints one JSON line per count. The open-file limit is raised to
# the hard limit (`ulimit -Hn`), which bounds the sockets one daemon can hold: a count past it is cut to fit, and said.
# Env: COUNTS ("10000 19000"), PER_CHILD (5000).
# Run from a clone after scripts/setup.sh: bash bench/rooms/idle.sh
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
COUNTS=${COUNTS:-10000 19000} PER_CHILD=${PER_CHILD:-5000}
ulimit -n "$(ulimit -Hn)"
limit=$(ulimit -n)
daemon_env bench-idle
echo "# $(date -u +%FT%TZ) $(nproc) cores; open files limit $limit; counts $COUNTS; commit $(git -C "$(dirname "$0")" rev-parse --short HEAD)"
for n in $COUNTS; do
	if [ "$n" -gt $((limit - 500)) ]; then
		echo "# $n sockets do not fit the open-file limit $limit of one process: $((limit - 500)) instead"
		n=$((limit - 500))
	fi
	daemon_start "idle-$n.log" --service workers --queue chat-messages --consume off --identity "bench-idle-$n" --log-level notice
	daemon_wait_healthy
	echo "# $n sockets: load average $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%T)"
	NODE_PATH="$H_ROOT/tests/node_modules" node "$(dirname "$0")/idle.mjs" "$DAEMON_PORT" "$DAEMON_PID" "$n" "$PER_CHILD"
	kill "$DAEMON_PID"
	harness_wait_for 60 daemon_gone "$DAEMON_PID"
done
