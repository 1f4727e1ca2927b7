#!/usr/bin/env bash
# bench/membership/run.sh - the connect storm with --authz membership against token mode, in one run
# (docs/journal/membership-connect.md): one Postgres, one Redis, and for each mode a fresh daemon
# (gateway only, --consume off) to which SOCKETS /ws clients connect, BATCH at a time, each a user of
# its own in 5 chats, each chat shared by CHAT_SIZE users: in the token's chats claim (token mode), or
# in chat_outbox.members (SOCKETS x 5 rows, membership mode: one query per user, nothing cached
# before). CHAT_SIZE=SOCKETS puts everyone in the same 5 chats: then each join's chat_state carries
# the chat's whole presence list, and that (not the authorization) is what the storm costs. Prints one JSON line per mode
# (connect.mjs: welcomed, retried, failed and dropped sockets, times, RSS, the membership cache) and
# the machine's load average before it (the cores may be shared).
# Env: SOCKETS (10000), BATCH (250), ROUNDS (2: token, membership, token, membership), CHAT_SIZE (10).
# Run from a clone after scripts/setup.sh (it builds the daemon and installs the extension): bash bench/membership/run.sh
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
SOCKETS=${SOCKETS:-10000} BATCH=${BATCH:-250} ROUNDS=${ROUNDS:-2} CHAT_SIZE=${CHAT_SIZE:-10}
daemon_env bench-membership
# user i in chats g*5+1 .. g*5+5, g = i / CHAT_SIZE (connect.mjs's chatsOf)
q "INSERT INTO chat_outbox.members (chat_id, user_id) SELECT (i / $CHAT_SIZE) * 5 + k, 'user-' || i FROM generate_series(0, $SOCKETS - 1) i, generate_series(1, 5) k" >/dev/null
echo "# $(date -u +%FT%TZ) $(nproc) cores; $SOCKETS sockets, $BATCH at a time, $CHAT_SIZE users a chat; $(q "SELECT count(*) FROM chat_outbox.members") membership rows; commit $(git -C "$(dirname "$0")" rev-parse --short HEAD)"
for round in $(seq "$ROUNDS"); do
	for mode in token membership; do
		daemon_start "$mode-$round.log" --service workers --queue chat-messages --consume off --authz "$mode" \
			--identity "bench-$mode-$round" --log-level notice
		daemon_wait_healthy
		echo "# $mode, round $round: load average $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%T)"
		node "$(dirname "$0")/connect.mjs" "$DAEMON_PORT" "$DAEMON_PID" "$mode" "$SOCKETS" "$BATCH" "$CHAT_SIZE"
		kill "$DAEMON_PID"
		harness_wait_for 20 daemon_gone "$DAEMON_PID"
	done
done
