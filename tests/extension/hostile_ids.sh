#!/usr/bin/env bash
# tests/extension/hostile_ids.sh - hand-written outbox rows can never poison a queue.
#   Rows whose payload id names one of the queue's own keys (every key name BullMQ uses under
#   <prefix>:<queue>:) are relayed under their fallback id, and the queue's keys keep their types;
#   a row whose job key Redis already holds as something else than a job is refused alone: kept
#   unsent, shown in chat_outbox.status with the reason, logged once, and the rows after it go on.
#   30 ordinary send_message calls made after them all reach the receiving daemon's inbox, also
#   after a Redis restart (AOF replayed). The rows are written by the superuser: grant_service gives
#   roles no INSERT on the outbox.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
daemon_env extension-hostile-ids

Q=bull:chat-messages
# every key name BullMQ 6 puts directly under a queue (bullmq's QueueKeys, its scripts and its
# legacy keys); common/bullmq/queue_keys.cpp holds the same list, unit-tested name by name
RESERVED="wait waiting paused meta events marker active id delayed delay prioritized priority completed failed
stalled stalled-check limiter pc repeat de dn metrics waiting-children"

daemon_start daemon.log --service workers --queue chat-messages
daemon_wait_consuming daemon.log

# a key under the queue that is not a job hash: the row that would be that job cannot be relayed
rcli SET "$Q:taken-1" "not a job" >/dev/null
for id in $RESERVED taken-1; do
	q "INSERT INTO consumers.outbox (event, payload)
	   VALUES ('message.created', jsonb_build_object('id', '$id', 'chat_id', 1, 'body', 'hostile $id'))" >/dev/null
done
refused_id=$(q "SELECT id FROM consumers.outbox WHERE payload->>'id' = 'taken-1'")

for i in $(seq 30); do q "SELECT consumers.send_message(2, 'ordinary $i')" >/dev/null; done
wait_inbox workers 30 60
expect_eq "ordinary messages in the inbox, in order" "$(seq -f 'ordinary %g' 30 | paste -sd,)" \
	"$(q "SELECT string_agg(body, ',' ORDER BY seq) FROM workers.inbox")"

# each of the queue's keys has its own type, or is absent (an empty list is no key)
types() { for k in wait meta events marker active completed failed; do echo -n "$k=$(rcli TYPE "$Q:$k" | sed s/none/-/) "; done; }
TYPES_OK='^wait=(list|-) meta=hash events=stream marker=(zset|-) active=(list|-) completed=zset failed=zset $'
[[ "$(types)" =~ $TYPES_OK ]] || fail "queue key types: $(types)"
echo "ok: queue key types: $(types)"
for id in $RESERVED; do
	oid=$(q "SELECT id FROM consumers.outbox WHERE payload->>'id' = '$id'")
	[ "$(rcli HGET "$Q:outbox-consumers-$oid" name)" = message.created ] || fail "row with id $id was not relayed as outbox-consumers-$oid"
done
echo "ok: every reserved id relayed under its fallback id"

status() { q "SELECT $1 FROM chat_outbox.status WHERE service = 'consumers'"; }
expect_eq "unsent (refused rows are counted apart)" 0 "$(status unsent)"
expect_eq "refused" 1 "$(status refused)"
reason=$(status refused_reason)
case "$reason" in *"$Q:taken-1"*string*) echo "ok: refused_reason: $reason" ;; *) fail "refused_reason: '$reason'" ;; esac
expect_eq "the refused row is kept unsent" "" "$(q "SELECT sent_at FROM consumers.outbox WHERE id = $refused_id")"
expect_eq "the string key is untouched" "not a job" "$(rcli GET "$Q:taken-1")"

# ids that name queue keys, pushed onto wait by someone else (a foreign producer, an older relay):
# the daemon drops them as phantom jobs and never touches those keys
meta_before=$(rcli HGETALL "$Q:meta" | paste -sd,)
rcli LPUSH "$Q:wait" meta events >/dev/null
q "SELECT consumers.send_message(2, 'after foreign ids')" >/dev/null
wait_inbox workers 31 60
expect_eq "meta untouched by the daemon" "$meta_before" "$(rcli HGETALL "$Q:meta" | paste -sd,)"
expect_eq "events still a stream" stream "$(rcli TYPE "$Q:events")"

# A queue poisoned before this fix (its wait list is a hash): the relay's batch and the daemon's
# fetch are refused whole and write nothing; once the key is repaired, both go on.
P=bull:poisoned
rcli HSET "$P:wait" name message.created data '{}' >/dev/null
q "SELECT chat_outbox.create_service('poisoned_svc', queue => 'poisoned')" >/dev/null
daemon_start poisoned.log --service workers --queue poisoned --identity poisoned-reader
q "SELECT poisoned_svc.send_message(3, 'through a poisoned queue')" >/dev/null
service_error() { q "SELECT service_error FROM chat_outbox.status WHERE service = 'poisoned_svc'"; }
has_badqueue() { [[ "$(service_error)" == *BADQUEUE* ]]; }
harness_wait_for 30 has_badqueue || fail "poisoned_svc service_error: '$(service_error)'"
harness_wait_for 30 grep -q BADQUEUE "$H_DIR/poisoned.log" || fail "the daemon's fetch was not refused"
# (the daemon's own keys beside the queue's, its lease and the members registry, do not count)
expect_eq "the relay and the daemon wrote nothing to the poisoned queue" "$P:wait" \
	"$(rcli KEYS "$P:*" | grep -v -e ':lease$' -e ':members$' | paste -sd,)"
expect_eq "its wait hash is untouched" "name,message.created,data,{}" "$(rcli HGETALL "$P:wait" | paste -sd,)"
rcli DEL "$P:wait" >/dev/null
wait_inbox workers 32 60
expect_eq "after the repair" "through a poisoned queue" "$(q "SELECT body FROM workers.inbox ORDER BY seq DESC LIMIT 1")"

# Redis restarts from its AOF: nothing poisoned comes back, later messages still flow
harness_redis_stop
harness_redis_start_again
for i in $(seq 31 35); do q "SELECT consumers.send_message(2, 'ordinary $i')" >/dev/null; done
wait_inbox workers 37 60
[[ "$(types)" =~ $TYPES_OK ]] || fail "queue key types after the restart: $(types)"
expect_eq "refused row logged once" 1 "$(relay_log_lines "refused outbox row $refused_id")"

# once the key is freed, clearing the mark relays the row (after the chat's later messages)
rcli DEL "$Q:taken-1" >/dev/null
q "UPDATE consumers.outbox SET refused = NULL WHERE id = $refused_id"
harness_wait_for 30 bash -c "[ \"\$(redis-cli -p $REDIS_PORT HGET $Q:taken-1 name)\" = message.created ]"
expect_eq "refused after the retry" 0 "$(status refused)"
echo PASS
