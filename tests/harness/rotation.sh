# tests/harness/rotation.sh - the outbox's rotation under faults, what the rotation_faults suites of both
# modes share (tests/extension/rotation_faults.sh: the relay is a background worker;
# tests/managed/rotation_faults.sh: it is chat-outbox-relay). Sourced after tests/extension/delivery.sh
# (sender_*, verify_counted), with $PROCESSED set (the job ids consume.mjs writes); service consumers.
#   start_stream                       a real bullmq Worker (consume.mjs) on the queue and the sender, until the
#                                      first truncate
#   truncated, truncated_at_least <n>  generations truncated so far (chat_outbox.outbox_rotation)
#   rotation_waiters                   pids of the relay sessions waiting for a lock inside a rotation step
#   hold_rotation                      a psql session holding consumers' rotation row FOR UPDATE; HOLD_FD
#                                      is its input (closing it ends the session)
#   release_rotation                   that session rolls back and ends
#   rotation_held_by_relay             hold_rotation, then the relay waits behind it and 50 sends go on
#   goes_on <what> <truncated before>  50 more sends acknowledged and two more truncates (the second
#                                      truncates a generation that took rows after the fault)
#   count_outbox_changes               adds the outbox rows updated or deleted to OUTBOX_CHANGES; called
#                                      before each crash, which discards the statistics
#   restart_postgres_in_rotation       Postgres restarted (immediate) while the relay waits inside a rotation
#                                      step; TRUNCATED_BEFORE: the truncates before it
#   change_partitions_in_stream        the partition count 1 -> 4 under the sender, the rotation going on; the
#                                      sender stopped, every row sent, the new queues' jobs added to $PROCESSED
#   verify_rotation_faults             every stored message processed once, each chat in order (counted), no
#                                      outbox row updated or deleted
# What a rotation step shows in pg_stat_activity: the background worker's activity, or the relay
# process's statement (common/relay/relay_sql.hpp, kRotate).

OUTBOX_CHANGES=0

truncated() { q "SELECT truncated FROM chat_outbox.outbox_rotation WHERE service = 'consumers'"; }
truncated_at_least() { [ "$(truncated)" -ge "$1" ]; }

start_stream() {
	node "$H_ROOT/tests/extension/consume.mjs" "$PROCESSED" >"$H_DIR/consumer.log" 2>&1 &
	harness_track $!
	harness_wait_for 20 grep -q ready "$H_DIR/consumer.log"
	sender_start rot 2
	harness_wait_for 60 truncated_at_least 1 || fail "no truncate under the stream"
}

rotation_waiters() {
	q "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock'
		AND query IN ('chat_outbox relay: rotating the outbox', 'SELECT chat_outbox.outbox_rotate(\$1, \$2)') ORDER BY pid"
}
rotation_waited_by() { [ "$(rotation_waiters | wc -l)" = "$1" ]; }

hold_rotation() {
	rm -f "$H_DIR/hold.fifo"
	mkfifo "$H_DIR/hold.fifo"
	psql -XAtq "$PGURL" -f "$H_DIR/hold.fifo" >"$H_DIR/hold.out" 2>&1 &
	harness_track $!
	exec {HOLD_FD}>"$H_DIR/hold.fifo"
	echo "BEGIN; SELECT 'held' FROM chat_outbox.outbox_rotation WHERE service = 'consumers' FOR UPDATE;" >&$HOLD_FD
	harness_wait_for 10 grep -q '^held$' "$H_DIR/hold.out"
}

release_rotation() {
	echo "ROLLBACK;" >&$HOLD_FD
	exec {HOLD_FD}>&-
}

rotation_held_by_relay() {
	local at
	hold_rotation
	harness_wait_for 30 rotation_waited_by 1 || fail "the relay never waited inside a rotation step"
	at=$(sender_acked)
	harness_wait_for 30 sender_acked_at_least $((at + 50)) || fail "sends stopped while the rotation was held"
	echo "ok   the relay waits inside a rotation step; 50 sends since, $(relay_status unsent) rows unsent"
}

goes_on() {
	local at
	at=$(sender_acked)
	harness_wait_for 60 sender_acked_at_least $((at + 50)) || fail "sends stopped after $1"
	harness_wait_for 60 truncated_at_least $(($2 + 2)) || fail "the rotation did not go on after $1"
	echo "ok   $1: $(($(truncated) - $2)) truncates since"
}

count_outbox_changes() {
	OUTBOX_CHANGES=$((OUTBOX_CHANGES + $(q "SELECT coalesce(sum(n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables
		WHERE schemaname = 'consumers' AND relname LIKE 'outbox_events%'")))
}

restart_postgres_in_rotation() {
	rotation_held_by_relay
	TRUNCATED_BEFORE=$(truncated)
	count_outbox_changes
	harness_pg_ctl -m immediate -w restart >/dev/null
	exec {HOLD_FD}>&- # the holding session went with the server
}

# consume.mjs serves the old queue only: the change waits until it is drained, then the relay goes to
# the 4 new queues, whose jobs are read from Redis (waiting there, never processed twice)
change_partitions_in_stream() {
	local t p
	t=$(truncated)
	q "SELECT chat_outbox.set_partitions('consumers', 4)" >/dev/null
	harness_wait_value 60 = 4 relay_status layout || fail "the relay did not switch to 4 partitions"
	goes_on "the partition count 1 -> 4 during the stream" "$t"
	sender_stop
	harness_wait_value 60 = 0 q "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL" || fail "rows left unsent"
	# (redis-cli prints an empty list as an empty line)
	for p in 0 1 2 3; do rcli LRANGE "bull:chat-messages-p$p:wait" 0 -1 | tac; done | sed '/^$/d' >"$H_DIR/after-switch.txt"
	cat "$H_DIR/after-switch.txt" >>"$PROCESSED"
}

verify_rotation_faults() {
	verify_counted "two crashes inside rotation steps and a partition change"
	count_outbox_changes
	expect_eq "outbox rows updated or deleted (the statistics a crash discards counted before it)" 0 "$OUTBOX_CHANGES"
}
