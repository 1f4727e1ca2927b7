#!/usr/bin/env bash
# tests/extension/rotation_faults.sh - the outbox's rotation survives the relay's and Postgres's
# crashes (chat_outbox.retention = 1s, a sender sending throughout, a real bullmq Worker processing):
#   1. the relay SIGKILLed in the middle of a rotation step: held there by a lock this test takes on
#      the service's rotation row (relaying goes on: a pass never waits for the rotation), killed
#      once pg_stat_activity shows it waiting inside outbox_rotate; the cluster's crash recovery
#      rolls the step back, and the rotation goes on;
#   2. Postgres restarted (immediate) while the relay waits the same way;
#   3. a partition count change (1 -> 4) during the stream, with the rotation going on.
# Checks: every stored message processed exactly once (the 4 new queues read from Redis), no outbox row updated
# or deleted, and the rotation truncated generations after each fault.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-rotation-faults
harness_redis_start
harness_pg_start "" "chat_outbox.retention = '1s'"
export REDIS_URL PGURL
HERE=$H_ROOT/tests/extension
PROCESSED=$H_DIR/processed.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"
. "$HERE/delivery.sh"

truncated() { q "SELECT truncated FROM chat_outbox.outbox_rotation WHERE service = 'consumers'"; }
truncated_at_least() { [ "$(truncated)" -ge "$1" ]; }
relay_pid() { q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'"; }
relay_in_rotation() {
	[ "$(q "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'
		AND query = 'chat_outbox relay: rotating the outbox' AND wait_event_type = 'Lock'")" = 1 ]
}
# a session holding the rotation row of consumers: hold_rotation starts it
hold_rotation() {
	rm -f "$H_DIR/hold.fifo"
	mkfifo "$H_DIR/hold.fifo"
	psql -XAtq "$PGURL" -f "$H_DIR/hold.fifo" >"$H_DIR/hold.out" 2>&1 &
	harness_track $!
	exec {hold_fd}>"$H_DIR/hold.fifo"
	echo "BEGIN; SELECT 'held' FROM chat_outbox.outbox_rotation WHERE service = 'consumers' FOR UPDATE;" >&$hold_fd
	harness_wait_for 10 grep -q '^held$' "$H_DIR/hold.out"
}

# goes_on <what> <truncates before>: 50 more sends acknowledged and two more truncates
goes_on() {
	local at
	at=$(sender_acked)
	harness_wait_for 60 sender_acked_at_least $((at + 50)) || fail "sends stopped after $1"
	harness_wait_for 60 truncated_at_least $(($2 + 2)) || fail "the rotation did not go on after $1"
	echo "ok   $1: $(($(truncated) - $2)) truncates since"
}

node "$HERE/consume.mjs" "$PROCESSED" >"$H_DIR/consumer.log" 2>&1 &
harness_track $!
harness_wait_for 20 grep -q ready "$H_DIR/consumer.log"
sender_start rot 2
harness_wait_for 60 truncated_at_least 1 || fail "no truncate under the stream"

# 1. the relay killed inside a rotation step
hold_rotation
harness_wait_for 30 relay_in_rotation || fail "the relay never waited inside outbox_rotate"
at=$(sender_acked)
harness_wait_for 30 sender_acked_at_least $((at + 50))
before=$(relay_pid)
t=$(truncated)
kill -9 "$before"
exec {hold_fd}>&- # the crash recovery ended the holding session too
relay_back() { [ -n "$(relay_pid)" ] && [ "$(relay_pid)" != "$before" ]; }
harness_wait_for 60 relay_back || fail "the relay did not come back"
goes_on "the relay SIGKILLed inside a rotation step" "$t"

# 2. Postgres restarted while the relay waits inside a rotation step
hold_rotation
harness_wait_for 30 relay_in_rotation || fail "the relay never waited inside outbox_rotate (2)"
t=$(truncated)
harness_pg_ctl -m immediate -w restart >/dev/null
exec {hold_fd}>&-
goes_on "Postgres restarted inside a rotation step" "$t"

# 3. the partition count changes during the stream (the new queues' Workers: consume.mjs serves
# the old queue only, so the change waits until it is drained, then the relay goes to 4 queues)
t=$(truncated)
q "SELECT chat_outbox.set_partitions('consumers', 4)" >/dev/null
switched() { [ "$(q "SELECT layout FROM chat_outbox.status WHERE service = 'consumers'")" = 4 ]; }
harness_wait_for 60 switched || fail "the relay did not switch to 4 partitions"
goes_on "the partition count 1 -> 4 during the stream" "$t"
sender_stop
all_sent() { [ "$(q "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL")" = 0 ]; }
harness_wait_for 60 all_sent || fail "rows left unsent"

# what went to the 4 new queues is read from Redis: jobs waiting there, never processed twice
for p in 0 1 2 3; do rcli LRANGE "bull:chat-messages-p$p:wait" 0 -1 | tac; done >"$H_DIR/after-switch.txt"
cat "$H_DIR/after-switch.txt" >>"$PROCESSED"
verify_delivered "two crashes inside rotation steps and a partition change"
expect_eq "outbox rows updated or deleted" 0 \
	"$(q "SELECT coalesce(sum(n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables WHERE schemaname = 'consumers' AND relname LIKE 'outbox_events%'")"
