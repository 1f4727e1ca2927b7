#!/usr/bin/env bash
# tests/managed/relay.sh - chat-outbox-relay on a managed install: every message once, in order.
#   1. send_message -> a real bullmq Worker: jobId = message id, in send order, woken by NOTIFY
#      (the poll interval is set to an hour, so only the notification can wake the relay in time).
#   2. The relay SIGKILLed mid-batch (rows claimed and marked in its open transaction, the Lua call
#      held by CLIENT PAUSE) and started again.
#   3. Two relays at once (a rolling deploy).
#   4. Redis stopped while sending, then started again: rows wait, one log line each way, and the relay's
#      chat_outbox_relay_redis_reconnects_total (its /metrics) moves from 0.
#   5. A late commit with a lower id than a message already relayed.
#   6. SCRIPT FLUSH under the relays: the script is loaded again, logged once.
#   7. A service whose outbox is gone: the others go on, its service_error shows why, logged once.
# After each phase every stored message was processed exactly once (tests/extension/delivery.sh);
# after 1-4, in the order the one sender stored them (outbox id order).
# --logical: every relay woken by logical decoding (wake = 'wal', --wake logical) instead of NOTIFY.
set -euo pipefail
[ "${1:-}" != --logical ] || export HARNESS_MANAGED_WAKE=logical
. "$(dirname "$0")/../harness/lib.sh"
relay_managed_env managed-relay
HERE=$H_ROOT/tests/extension
PROCESSED=$H_DIR/processed.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"
. "$HERE/delivery.sh"

node "$HERE/consume.mjs" "$PROCESSED" >"$H_DIR/consumer.log" 2>&1 &
harness_track $!
harness_wait_for 20 grep -q ready "$H_DIR/consumer.log"

# 1. end to end, woken by the notification alone (or the logical stream: HARNESS_MANAGED_WAKE=logical)
relay_start one --poll-interval 3600000 --redis-timeout 30000
harness_wait_value 10 = running relay_status relay_state
node "$HERE/send.mjs" 100 e2e 2 >"$H_DIR/sender1.log" 2>&1
verify_delivered "end to end"
verify_order "end to end"
job=$(harness_psql "SELECT id FROM consumers.messages ORDER BY created_at LIMIT 1")
expect_eq "job data of message $job" "$(harness_psql "SELECT payload::text FROM consumers.outbox WHERE payload ->> 'id' = '$job'")" \
	"$(rcli hget "bull:chat-messages:$job" data)"
expect_eq "status: relay's pid" "$RELAY_PID" "$(relay_status worker_pid)"
expect_eq "the relay's connection, named in pg_stat_activity" 1 \
	"$(harness_psql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'chat-outbox-relay'")"
expect_eq "status: unsent" 0 "$(relay_status unsent)"
[ "$(relay_status last_relayed_id)" = "$(harness_psql "SELECT max(id) FROM consumers.outbox")" ] || fail "last_relayed_id"

# 1b. Redis closes the relay's idle connection (CLIENT KILL of its address only: the Worker's stay):
# no outage. The next batch goes once more on a new connection; that new connection makes the
# round after read the marks first, which meet the connection closed again and read once more too
# (common/relay/redis_server_link.hpp). One message per round: a round only when one is sent.
kill_relay_redis() {
	local addrs
	addrs=$(redis_conns_of "$RELAY_PID")
	[ -n "$addrs" ] || fail "no Redis connection of the relay (pid $RELAY_PID)"
	for a in $addrs; do rcli CLIENT KILL ADDR "$a" >/dev/null; done
}
outages=$(relay_log_count 'redis unreachable')
for round in batch marks; do
	kill_relay_redis
	node "$HERE/send.mjs" 1 "closed-$round" 0 >>"$H_DIR/sender1.log" 2>&1
	verify_delivered "a message after the relay's connection was closed ($round)"
done
expect_eq "outages logged for a closed idle connection" "$outages" "$(relay_log_count 'redis unreachable')"
verify_order "end to end, with closed connections"

# 2. SIGKILL mid-batch: Redis holds the batch's Lua call (CLIENT PAUSE WRITE) while the relay's
# transaction has claimed and marked its rows; the kill rolls them back, the next relay sends them
# again (a job Redis may have taken meanwhile is a BullMQ duplicate, not a second job)
mid_batch() { # the relay's session: in a transaction that wrote (the claim), waiting for Redis
	[ "$(harness_psql "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND usename = current_user
		AND state = 'idle in transaction' AND backend_xid IS NOT NULL")" -ge 1 ]
}
sender_start crash 5
harness_wait_for 20 sender_acked_at_least 80
rcli client pause 30000 write >/dev/null
harness_wait_for 20 mid_batch
kill -9 "$RELAY_PID"
rcli client unpause >/dev/null
echo "ok   relay SIGKILLed with a claimed batch in flight"
at=$(sender_acked)
harness_wait_for 20 sender_acked_at_least $((at + 80)) # sends go on with no relay running
relay_start one-again --poll-interval 3600000
at=$(sender_acked)
harness_wait_for 20 sender_acked_at_least $((at + 20))
sender_stop
verify_delivered "relay SIGKILLed mid-batch"
verify_order "relay SIGKILLed mid-batch"

# 3. two relays at once
RELAY_METRICS_URL=http://127.0.0.1:$(harness_free_port)
relay_start two --poll-interval 100 --metrics-listen "${RELAY_METRICS_URL#http://}"
relay_metric() { curl -s "$RELAY_METRICS_URL/metrics" | sed -n "s/^$1 //p"; } # that series' one value
node "$HERE/send.mjs" 300 two 2 >"$H_DIR/sender3.log" 2>&1
verify_delivered "two relays at once"
verify_order "two relays at once"
[ "$(harness_psql "SELECT count(*) FROM chat_outbox.relays WHERE relay IN ('one-again', 'two') AND heartbeat_at > now() - interval '5 s'")" -eq 2 ] ||
	fail "two relays: not both heartbeating"

# 4. Redis down and back; a service with nothing to send is relayed before consumers in each round,
# and must not make the outage look over (no "redis back" between two "redis unreachable")
harness_psql "SELECT chat_outbox.create_service('aaa_idle')" >/dev/null
sender_start outage 10
harness_wait_for 20 sender_acked_at_least 30
redis_reconnects_before=$(relay_metric chat_outbox_relay_redis_reconnects_total)
harness_redis_stop
harness_wait_value 20 = 'backing off' relay_status relay_state
sleep 3 # the outage: sends go on meanwhile
unsent=$(relay_status unsent)
[ "$unsent" -gt 0 ] || fail "outage: no rows waited in the outbox"
echo "ok   outage: $unsent rows waiting, relay backing off ($(relay_status last_error))"
harness_redis_start_again
at=$(sender_acked)
harness_wait_for 20 sender_acked_at_least $((at + 30))
sender_stop
verify_delivered "redis down and back"
verify_order "redis down and back"
harness_wait_for 10 bash -c "cat '$H_DIR'/relay-*.log | grep -q 'redis back, relayed'"
expect_eq "redis reconnects before the outage" 0 "$redis_reconnects_before"
harness_wait_value 10 -ge 1 relay_metric chat_outbox_relay_redis_reconnects_total
echo "ok   chat_outbox_relay_redis_reconnects_total $(relay_metric chat_outbox_relay_redis_reconnects_total) after the outage"
# once per relay and reason, never per retry: a relay logs the outage again only when its reason changes
# (a refused connect, then Redis' LOADING while it reads its AOF back), so no reason follows itself
[ "$(relay_log_count 'redis unreachable')" -ge 1 ] || fail "the outage was not logged"
for log in "$H_DIR"/relay-*.log; do
	repeated=$(grep -o 'redis unreachable: [^;]*' "$log" | uniq -d || true)
	[ -z "$repeated" ] || fail "outage: $(basename "$log") logged a reason twice in a row (a line per retry): $repeated"
done
echo "ok   outage logged once per relay and reason ($(relay_log_count 'redis unreachable') lines by two relays)"

# 5. a late commit with a lower id
( printf "BEGIN;\nSELECT id FROM consumers.send_message(9, 'late');\n"
	until [ -f "$H_DIR/commit-late" ]; do sleep 0.05; done
	printf "COMMIT;\n" ) | psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" >"$H_DIR/late.out" &
late_session=$!
harness_wait_for 10 test -s "$H_DIR/late.out"
early=$(harness_psql "SELECT id FROM consumers.send_message(9, 'early')")
harness_wait_for 20 grep -q "$early" "$PROCESSED"
touch "$H_DIR/commit-late"
wait $late_session
late=$(head -1 "$H_DIR/late.out")
verify_delivered "late commit"
[ "$(harness_psql "SELECT (SELECT id FROM consumers.outbox WHERE payload ->> 'id' = '$late') < (SELECT id FROM consumers.outbox WHERE payload ->> 'id' = '$early')")" = t ] ||
	fail "late commit: the late message did not get the lower id"
echo "ok   late commit: the lower id committed later was relayed too"

# 6. SCRIPT FLUSH under connected relays: the next batch loads the script again, logged once
# both relays connected to the restarted Redis first (a relay that connects later loads the script anyway)
both_running() { [ "$(harness_psql "SELECT count(*) FROM chat_outbox.relays WHERE relay IN ('one-again', 'two') AND state = 'running'")" = 2 ]; }
harness_wait_for 20 both_running
rcli script flush >/dev/null
sent=$(harness_psql "SELECT id FROM consumers.send_message(3, 'after a script flush')")
harness_wait_for 20 grep -q "$sent" "$PROCESSED"
# the relay logs the reload after its pass commits, which may be after the Worker took the job
harness_wait_value 10 -ge 1 relay_log_count 'lost the batch-add script'
reloads=$(relay_log_count 'lost the batch-add script')
[ "$reloads" -ge 1 ] && [ "$reloads" -le 2 ] || fail "SCRIPT FLUSH: $reloads reloads logged by two relays"
echo "ok   SCRIPT FLUSH: the script loaded again ($reloads line(s)), the message relayed"

# 7. one broken service holds back no other
harness_psql "SELECT chat_outbox.create_service('aaa_broken')" >/dev/null
harness_psql "SET client_min_messages = warning; DROP TABLE aaa_broken.outbox_events CASCADE"
sent=$(harness_psql "SELECT id FROM consumers.send_message(3, 'past a broken service')")
harness_wait_for 20 grep -q "$sent" "$PROCESSED"
harness_wait_for 10 bash -c "[ -n \"\$(psql -XAtq '$PGURL' -c \"SELECT service_error FROM chat_outbox.status WHERE service = 'aaa_broken'\")\" ]"
echo "ok   a service without its outbox: $(harness_psql "SELECT service_error FROM chat_outbox.status WHERE service = 'aaa_broken'")"
sleep 1.5 # more rounds run meanwhile: the failure must stay logged once per relay
# (and once more where a pass raced the DROP: a relation it had looked up by name was gone when it opened
# it, "could not open relation with OID …", before the failure that stays; the log says each change)
[ "$(relay_log_count 'service aaa_broken')" -le 4 ] || fail "broken service logged $(relay_log_count 'service aaa_broken') times"
[ "$(relay_log_count 'service aaa_broken: relation')" -le 2 ] || fail "the lasting failure logged $(relay_log_count 'service aaa_broken: relation') times"
verify_delivered "past a broken service"

kill -TERM "$RELAY_PID"
wait "$RELAY_PID" || fail "relay exited $? on SIGTERM"
grep -q stopping "$H_DIR/relay-two.log" || fail "relay did not stop cleanly"
echo "ok   SIGTERM: relay stopped with status 0"
