#!/usr/bin/env bash
# tests/extension/late_commit_pass.sh - a commit that lands between two batches of one relay pass
# never lets a chat's later message pass it.
# A pass reads batch after batch of its window: the rows visible in its tick's snapshot and not in
# the previous tick's. A row with a lower id whose transaction was still open at the tick is not in
# that window; if it commits while the pass goes on, and its sender, having seen the commit, sends
# again in the same chat, the newer row (a higher id) must not be relayed ahead of the older one:
# both are in a later window, sent in id order.
# Made deterministic with a row lock: batch_size 2, rows a b c d of chat 2 committed, `late` of
# chat 1 open in session X with the lowest id; the pass takes its tick, reads a b, then waits on a
# lock we hold on the service's cursor. Meanwhile X commits and `after` (chat 1) is sent and
# committed. Released, the pass sends a b, then c d and then looks for a third batch. Also run in
# managed mode (chat-outbox-relay, managed.late_commit_pass).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
export CHAT_OUTBOX_RELAY_BATCH_SIZE=2
harness_init extension-late-commit-pass
harness_redis_start
harness_pg_start "" "chat_outbox.batch_size = 2"
SUPER_URL=${PG_SUPER_URL:-$PGURL}

relay_pid() {
	if [ "${HARNESS_MANAGED_RELAY:-0}" = 1 ]; then echo "$RELAY_PID"; else
		psql -XAtq "$SUPER_URL" -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'"
	fi
}
relay_up() { [ -n "$(relay_pid)" ]; }
harness_wait_for 30 relay_up
harness_psql "SELECT consumers.send_message(3, 'warm-up')" >/dev/null
unsent() { harness_psql "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL"; }
harness_wait_value 30 -eq 0 unsent || fail "the relay does not relay"
RELAY=$(relay_pid)

# a session held open on a FIFO: hold <name> starts it, say <name> <sql> feeds it
hold() {
	mkfifo "$H_DIR/$1.fifo"
	psql -XAtq -v ON_ERROR_STOP=1 "$2" -f "$H_DIR/$1.fifo" >"$H_DIR/$1.out" 2>&1 &
	harness_track $!
	eval "exec {fd_$1}>\"$H_DIR/$1.fifo\""
}
say() { local fd="fd_$1"; echo "$2" >&"${!fd}"; }

kill -STOP "$RELAY"
hold x "$PGURL"
say x "BEGIN; SELECT consumers.send_message(1, 'late');"
harness_wait_for 10 grep -c . "$H_DIR/x.out"
harness_psql "BEGIN; SELECT consumers.send_message(2, b) FROM unnest(ARRAY['a', 'b', 'c', 'd']) b; COMMIT;" >/dev/null
hold lock "$SUPER_URL"
say lock "BEGIN; SELECT 'locked' FROM chat_outbox.outbox_cursors WHERE service = 'consumers' FOR UPDATE;"
harness_wait_for 10 grep -c "^locked\$" "$H_DIR/lock.out"
kill -CONT "$RELAY"

# the pass has read a b and waits to move the cursor past them
waiting() { [ "$(psql -XAtq "$SUPER_URL" -c "SELECT count(*) FROM pg_locks WHERE NOT granted")" -ge 1 ]; }
harness_wait_for 30 waiting || fail "the relay never waited on the locked row"
say x "COMMIT; SELECT 'committed';"
harness_wait_for 10 grep -c committed "$H_DIR/x.out"
harness_psql "SELECT consumers.send_message(1, 'after')" >/dev/null
say lock "COMMIT;"
harness_wait_value 30 -eq 0 unsent || fail "rows left unsent"

# the order BullMQ hands the jobs out in: wait is LPUSHed, so oldest last
order=$(rcli LRANGE bull:chat-messages:wait 0 -1 | tac | while read -r job; do
	harness_psql "SELECT body FROM consumers.messages WHERE id::text = '$job'"
done | tr '\n' ' ')
echo "queue order: $order"
case "$order" in
*late*after*) echo "ok   chat 1's late-committed message is queued before the one sent after its commit" ;;
*) fail "chat 1 out of order: 'after' was queued before 'late' ($order)" ;;
esac
case "$order" in
*a\ b\ c\ d*) echo "ok   chat 2 in order" ;;
*) fail "chat 2 out of order ($order)" ;;
esac
