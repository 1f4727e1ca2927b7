#!/usr/bin/env bash
# tests/extension/retention.sh - the outbox is rotated, never purged row by row (chat_outbox.retention
# = 1s): under a stream of sends the relay switches generations and truncates the oldest once every
# cursor is past it, and no outbox row is ever updated or deleted (pg_stat_user_tables: no update, no
# delete, no dead tuple); every message becomes one job. A transaction held open after a send keeps
# the oldest generation from being truncated (chat_outbox.status says which transaction, by pid),
# relaying goes on meanwhile, and once it commits its row is relayed and the rotation goes on. A
# refused row outlives the truncate of its generation. A backlog of 20,000 unsent rows (relay paused)
# then drains and the rotation goes on.
# Also run in managed mode (managed.retention).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-retention
harness_redis_start
harness_pg_start "" "chat_outbox.retention = '1s'" # a rotation step every second
SUPER_URL=${PG_SUPER_URL:-$PGURL}
Q=bull:chat-messages

truncated() { q "SELECT truncated FROM chat_outbox.outbox_rotation WHERE service = 'consumers'"; }
truncated_at_least() { [ "$(truncated)" -ge "$1" ]; }
waits_for() { q "SELECT coalesce(rotation_wait, '') FROM chat_outbox.status WHERE service = 'consumers'"; }
unsent() { q "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL"; }
all_sent() { [ "$(unsent)" -eq 0 ]; }
# every message of consumers is one job (a resend would be a `duplicated` event, not a second job),
# plus one for each event of publish_event ($2, default 0)
one_job_each() {
	local stored jobs
	stored=$(($(q "SELECT count(*) FROM consumers.messages") + ${2:-0}))
	jobs=$(rcli LLEN "$Q:wait")
	[ "$stored" -eq "$jobs" ] || fail "$1: $stored messages stored, $jobs jobs in Redis"
	local missing=0
	for id in $(q "SELECT id FROM consumers.messages ORDER BY random() LIMIT 200"); do
		[ "$(rcli EXISTS "$Q:$id")" = 1 ] || missing=$((missing + 1))
	done
	[ "$missing" -eq 0 ] || fail "$1: $missing of 200 sampled messages have no job"
	echo "ok   $1: $stored messages, $jobs jobs, one each"
}
stream() { # stream <seconds>: 4 pgbench senders
	printf '%s\n' '\set c random(1, 50)' "SELECT consumers.send_message(:c, 'stream');" >"$H_DIR/send.pgbench"
	"$PG_BIN/pgbench" -n -f "$H_DIR/send.pgbench" -c 4 -j 2 -T "$1" "$PGURL" >"$H_DIR/pgbench.log" 2>&1
}

# 1. a stream: generations switch and the oldest are truncated while sends go on
t0=$(truncated)
stream 1
stream_until() { stream 1 && truncated_at_least "$1"; }
harness_wait_for 120 stream_until $((t0 + 2)) || fail "no two truncates under a stream (truncated: $(truncated))"
harness_wait_for 30 all_sent || fail "rows left unsent: $(unsent)"
one_job_each "a stream with $(($(truncated) - t0)) truncates"
changes=$(q "SELECT sum(n_tup_upd + n_tup_del + n_tup_hot_upd) || ' ' || sum(n_dead_tup) FROM pg_stat_user_tables
	WHERE schemaname = 'consumers' AND relname LIKE 'outbox_events%'")
expect_eq "outbox rows updated or deleted, dead tuples" "0 0" "$changes"
echo "     outbox rows now: $(q "SELECT count(*) FROM consumers.outbox_events") of $(q "SELECT count(*) FROM consumers.messages") sent"

# 2. a transaction held open after its send: the truncate waits for it (status names its pid),
# relaying goes on, and once it commits its row goes and so does the rotation
mkfifo "$H_DIR/x.fifo"
psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -f "$H_DIR/x.fifo" >"$H_DIR/x.out" 2>&1 &
harness_track $!
exec {xfd}>"$H_DIR/x.fifo"
echo "BEGIN; SELECT 'pid ' || pg_backend_pid(); SELECT id FROM consumers.send_message(9, 'held open');" >&$xfd
harness_wait_for 10 grep -q '^pid ' "$H_DIR/x.out"
held_pid=$(sed -n 's/^pid //p' "$H_DIR/x.out")
waits_for_held() { stream 1 && waits_for | grep -q "(pid $held_pid) is still running"; }
harness_wait_for 120 waits_for_held || fail "the rotation does not wait for the open transaction: '$(waits_for)'"
echo "ok   rotation_wait: $(waits_for)"
t1=$(truncated)
stream 2
harness_wait_for 30 all_sent || fail "relaying stopped behind the open transaction: $(unsent) unsent"
expect_eq "truncates while the transaction is open" "$t1" "$(truncated)"
echo "ok   relaying goes on while the truncate waits"
echo "COMMIT;" >&$xfd
exec {xfd}>&-
harness_wait_for 30 all_sent || fail "the held row was not relayed: $(unsent) unsent"
held=$(q "SELECT id FROM consumers.messages WHERE body = 'held open'")
[ "$(rcli HGET "$Q:$held" name)" = message.created ] || fail "the held message has no job"
rotation_goes_on() { stream 1 && truncated_at_least $((t1 + 1)) && [ -z "$(waits_for)" ]; }
harness_wait_for 120 rotation_goes_on || fail "the rotation did not go on after the commit: '$(waits_for)'"
echo "ok   after the commit: the held message is a job, the rotation goes on ($(truncated) truncates)"

# 3. a refused row outlives the truncate of its generation
rcli SET "$Q:00000000-0000-4000-8000-00000000c0de" "not a job" >/dev/null
q "SELECT id FROM consumers.publish_event('message.created', '{\"id\": \"00000000-0000-4000-8000-00000000c0de\", \"chat_id\": 3}')" >/dev/null
refused() { q "SELECT refused FROM chat_outbox.status WHERE service = 'consumers'"; }
harness_wait_value 30 -eq 1 refused || fail "the row was not refused"
t2=$(truncated)
harness_wait_for 120 stream_until $((t2 + 3)) || fail "no three truncates after the refusal"
expect_eq "refused rows after three truncates" 1 "$(refused)"
expect_eq "the refused row in the outbox view" "00000000-0000-4000-8000-00000000c0de" "$(q "SELECT payload->>'id' FROM consumers.outbox WHERE refused IS NOT NULL")"
rcli DEL "$Q:00000000-0000-4000-8000-00000000c0de" >/dev/null
q "UPDATE consumers.outbox SET refused = NULL WHERE refused IS NOT NULL" >/dev/null
relayed_once_freed() { [ "$(rcli HGET "$Q:00000000-0000-4000-8000-00000000c0de" name)" = message.created ]; }
harness_wait_for 30 relayed_once_freed || fail "the refused row was not relayed once freed"
echo "ok   the refused row survived $(($(truncated) - t2)) truncates and was relayed once freed"

# 4. a backlog of 20,000 unsent rows: the truncate waits for the relay, then the rotation goes on
q "ALTER SYSTEM SET chat_outbox.relay_enabled = off" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
paused() { [ "$(q "SELECT relay_state FROM chat_outbox.status WHERE service = 'consumers'")" = paused ]; }
harness_wait_for 30 paused
q "SELECT count(consumers.send_message(g % 50, 'backlog')) FROM generate_series(1, 20000) g" >/dev/null
echo "     while paused (no pass, no rotation step): unsent $(unsent)"
q "ALTER SYSTEM RESET chat_outbox.relay_enabled" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
harness_wait_for 120 all_sent || fail "the backlog did not drain: $(unsent) unsent"
t3=$(truncated)
harness_wait_for 120 stream_until $((t3 + 2)) || fail "the rotation did not go on after the backlog"
harness_wait_for 30 all_sent
one_job_each "after the backlog and $(truncated) truncates in all" 1
