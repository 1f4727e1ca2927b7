#!/usr/bin/env bash
# bench/membership/run.sh - the connect storm with --authz membership against token mode, in one run
# (docs/results/membership-connect.md): one Postgres, one Redis, and for each mode a fresh daemon
# (gateway only, --consume off) to which SOCKETS /ws clients connect, BATCH at a time, each a user of
# its own in 5 chats: in the token's chats claim (token mode), or in chat_outbox.members (SOCKETS x 5
# rows, membership mode: one query per user, nothing cached before). Prints one JSON line per mode.
# Env: SOCKETS (10000), BATCH (250), ROUNDS (2: token, membership, token, membership).
# Run from a clone after scripts/setup.sh (it builds the daemon and installs the extension): bash bench/membership/run.sh
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
SOCKETS=${SOCKETS:-10000} BATCH=${BATCH:-250} ROUNDS=${ROUNDS:-2}
daemon_env bench-membership
q "INSERT INTO chat_outbox.members (chat_id, user_id) SELECT c, 'user-' || i FROM generate_series(0, $SOCKETS - 1) i, generate_series(1, 5) c" >/dev/null
echo "# $(date -u +%FT%TZ) $(nproc) cores; $SOCKETS sockets, $BATCH at a time; $(q "SELECT count(*) FROM chat_outbox.members") membership rows"
for round in $(seq "$ROUNDS"); do
	for mode in token membership; do
		daemon_start "$mode-$round.log" --service workers --queue chat-messages --consume off --authz "$mode" \
			--identity "bench-$mode-$round" --log-level notice
		daemon_wait_healthy
		node "$(dirname "$0")/connect.mjs" "$DAEMON_PORT" "$DAEMON_PID" "$mode" "$SOCKETS" "$BATCH"
		kill "$DAEMON_PID"
		harness_wait_for 20 daemon_gone "$DAEMON_PID"
	done
done
