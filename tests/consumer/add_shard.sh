#!/usr/bin/env bash
# consumer.add_shard: the "Add a shard" procedure of docs/scale-out.md, followed step by step while a sender keeps
# sending. Service consumers has 4 partitions on one Redis; one chat-outboxd (--service workers)
# consumes them. Then, as that page says: the relay is paused (chat_outbox.relay_enabled = off and a
# reload), every partition queue is waited for until it holds no job, the relay gets the two-shard
# list (chat_outbox.redis_url and a reload) and the daemon too (--redis-url and a restart), the old
# first URL first, and the relay is turned on again. Checks: every message sent (before, during and
# after) reaches the inbox once, in send order per chat; partitions 1 and 3 are now served from the
# new shard (their jobs after the change are there, none waits on the old one), 0 and 2 stay.
. "$(dirname "$0")/../harness/lib.sh"
. "$H_ROOT/tests/harness/shards.sh"
daemon_env daemon-add-shard
shard1_start
Q=chat-messages

q "SELECT chat_outbox.set_partitions('consumers', 4)" >/dev/null
daemon_start workers.log --service workers --queue "$Q"
daemon_wait_consuming workers.log

# a sender through the whole procedure: one message per transaction, chats 1-5 in turn
node "$H_ROOT/tests/extension/send.mjs" 1000000 s 2 >"$H_DIR/sender.log" 2>&1 &
SENDER=$!
harness_track $SENDER
sent() { q "SELECT count(*) FROM consumers.messages"; }
harness_wait_value 30 -ge 100 sent || fail "the sender did not send"
wait_inbox workers 50 30
echo "ok   4 partitions on one shard: $(inbox_count workers) messages in the inbox"

# 1. pause the relay
q "ALTER SYSTEM SET chat_outbox.relay_enabled = off" && q "SELECT pg_reload_conf()" >/dev/null
unsent() { q "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL"; }
harness_wait_value 30 -gt 20 unsent || fail "rows are not waiting in the outbox: the relay still relays"
# 2. wait until every partition queue holds no job
queue_jobs() {
	local n=0 p
	for p in 0 1 2 3; do
		n=$((n + $(rcli LLEN "bull:$Q-p$p:wait") + $(rcli LLEN "bull:$Q-p$p:paused") + $(rcli LLEN "bull:$Q-p$p:active")))
		n=$((n + $(rcli ZCARD "bull:$Q-p$p:prioritized") + $(rcli ZCARD "bull:$Q-p$p:delayed")))
	done
	echo "$n"
}
harness_wait_value 30 -eq 0 queue_jobs || fail "partition queues still hold $(queue_jobs) jobs"
before=$(inbox_count workers)
echo "ok   relay paused ($(unsent) rows waiting), every partition queue empty, $before messages in the inbox"

# 3. the new list: the relay (reload) and the daemon (restart), the old first URL first
q "ALTER SYSTEM SET chat_outbox.redis_url = '$REDIS_URL $SHARD1_URL'" && q "SELECT pg_reload_conf()" >/dev/null
daemon_stop || fail "the daemon did not stop cleanly"
daemon_start workers2.log --service workers --queue "$Q" --redis-url "$REDIS_URL $SHARD1_URL"
daemon_wait_consuming workers2.log
# 4. the relay on again
q "ALTER SYSTEM SET chat_outbox.relay_enabled = on" && q "SELECT pg_reload_conf()" >/dev/null
harness_wait_value 30 -eq 0 unsent || fail "$(unsent) rows left unsent after the relay was turned on"
after_change=$(sent)
harness_wait_value 30 -ge $((after_change + 100)) sent || fail "the sender stopped"
kill "$SENDER"
wait "$SENDER" 2>/dev/null || true
total=$(sent)
wait_inbox workers "$total" 60
echo "ok   relay on with two shards: $total messages sent in all"

expect_eq "inbox = messages, each once" "$total|$total" \
	"$(q "SELECT count(*), count(DISTINCT i.message_id) FROM workers.inbox i JOIN consumers.messages m ON m.id = i.message_id")"
expect_eq "send order per chat" 0 "$(q "
	SELECT count(*) FROM (
		SELECT split_part(body, '-', 2)::int AS n, lag(split_part(body, '-', 2)::int) OVER (PARTITION BY chat_id ORDER BY seq) AS prev
		FROM workers.inbox) s WHERE prev > n")"
# chats 1-5: partition = chat mod 4, so chats 1 and 5 are in p1, chat 3 in p3 (shard 1 now), chats 2 and 4 in p2, p0
completed_on() { if [ "$1" = 1 ]; then rcli1 ZCARD "bull:$Q-p$2:completed"; else rcli ZCARD "bull:$Q-p$2:completed"; fi; }
for p in 1 3; do
	[ "$(completed_on 1 $p)" -gt 0 ] || fail "partition $p: no job completed on the new shard"
	expect_eq "partition $p: nothing left waiting on the old shard" 0 "$(rcli LLEN "bull:$Q-p$p:wait")"
done
for p in 0 2; do
	expect_eq "partition $p stays on shard 0" 0 "$(rcli1 EXISTS "bull:$Q-p$p:meta" "bull:$Q-p$p:completed")"
done
expect_eq "lease of partition 1 on the new shard" 1 "$(rcli1 EXISTS "bull:$Q-p1:lease")"
echo "ok   partitions 1 and 3 moved to the new shard ($(completed_on 1 1) and $(completed_on 1 3) jobs completed there), 0 and 2 stayed"
daemon_stop || fail "the daemon did not stop cleanly"
echo PASS
