#!/usr/bin/env bash
# bench/rooms/run.sh - join storms into one big room (bench/rooms/README.md): one Postgres, one Redis and, for
# each size in SIZES, a fresh daemon of service workers (consuming, so a message sent to the room reaches it)
# to which that many members of one chat connect over /ws, BATCH at a time (storm.mjs prints one JSON line per
# size). Extra daemon flags (say --presence-threshold 1000000 for the behaviour of small rooms) go in FLAGS.
# DAEMONS ("label=path ...") runs each size with each of those daemons in turn, in the same run (before and after
# a change, side by side); HISTORY makes every socket resume from the chat's history (storm.mjs).
# Env: SIZES ("300 1000 3000"), BATCH (200), FLAGS (""), DAEMONS (this build's), HISTORY (0).
# Run from a clone after scripts/setup.sh (it builds the daemon and installs the extension): bash bench/rooms/run.sh
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
SIZES=${SIZES:-300 1000 3000} BATCH=${BATCH:-200} FLAGS=${FLAGS:-} DAEMONS=${DAEMONS:-this=$CHAT_OUTBOXD}
export HISTORY=${HISTORY:-0}
ulimit -n "$(ulimit -Hn)"
daemon_env bench-rooms
echo "# $(date -u +%FT%TZ) $(nproc) cores; sizes $SIZES, $BATCH at a time; flags '${FLAGS}'; history $HISTORY; commit $(git -C "$(dirname "$0")" rev-parse --short HEAD)"
for n in $SIZES; do
	for d in $DAEMONS; do
		label=${d%%=*} CHAT_OUTBOXD=${d#*=}
		# shellcheck disable=SC2086 # FLAGS is a list of words
		daemon_start "storm-$n-$label.log" --service workers --queue chat-messages --identity "bench-rooms-$n-$label" --log-level notice $FLAGS
		daemon_wait_healthy
		echo "# $n members, daemon $label ($CHAT_OUTBOXD): load average $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%T)"
		NODE_PATH="$H_ROOT/tests/node_modules" node "$(dirname "$0")/storm.mjs" "$DAEMON_PORT" "$DAEMON_PID" "$n" "$BATCH"
		kill "$DAEMON_PID"
		harness_wait_for 20 daemon_gone "$DAEMON_PID"
	done
done
