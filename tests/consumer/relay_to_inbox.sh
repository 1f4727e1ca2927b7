#!/usr/bin/env bash
# consumer.relay_to_inbox: messages sent with consumers.send_message() travel through the extension's relay
# (queue chat-messages) to chat-outboxd --service workers: each exactly once in workers.inbox, in send
# order per chat; and the reverse direction (workers.send_message -> chat-replies -> consumers.inbox), each
# with its sender (NULL when sent without one). The consumers daemon exports the status views
# (--outbox-status-url): the relay running and no backlog, then, with Redis stopped, backing off with the
# message sent meanwhile waiting, then both cleared.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-relay
N=200

daemon_start workers.log --service workers --queue chat-messages --batch-size 64
daemon_start consumers.log --service consumers --queue chat-replies --outbox-status-url "$PGURL" --outbox-status-interval 500
CONSUMERS_URL=$DAEMON_URL
daemon_wait_consuming workers.log
daemon_wait_consuming consumers.log

# one message per transaction, alternating chats, some while the daemon is already consuming
for ((i = 0; i < N; i += 50)); do
	harness_psql "SELECT count(consumers.send_message(1 + (g % 3), 'msg ' || g)) FROM generate_series($i, $((i + 49))) g" >/dev/null
done
harness_psql "SELECT workers.send_message(42, 'reply ' || g, CASE WHEN g % 2 = 0 THEN 'user ' || g END) FROM generate_series(1, 20) g" >/dev/null
wait_inbox workers $N 60
wait_inbox consumers 20 60

expect_eq "workers.inbox = consumers.messages" "$N|$N" \
	"$(harness_psql "SELECT count(*), count(DISTINCT i.message_id) FROM workers.inbox i JOIN consumers.messages m ON m.id = i.message_id AND m.body = i.body AND m.chat_id = i.chat_id")"
# per chat, seq order equals send order (messages.created_at within one transaction is equal, so use the body's number)
expect_eq "order per chat" 0 "$(harness_psql "
	SELECT count(*) FROM (
		SELECT chat_id, split_part(body, ' ', 2)::int AS n, lag(split_part(body, ' ', 2)::int) OVER (PARTITION BY chat_id ORDER BY seq) AS prev
		FROM workers.inbox) s WHERE prev IS NOT NULL AND prev > n")"
expect_eq "created_at carried from the payload" 0 "$(harness_psql "SELECT count(*) FROM workers.inbox i JOIN consumers.messages m ON m.id = i.message_id WHERE i.created_at IS DISTINCT FROM m.created_at")"
expect_eq "sender carried to the inbox, NULL when sent without one" "20|10" \
	"$(harness_psql "SELECT count(*), count(i.sender) FROM consumers.inbox i JOIN workers.messages m ON m.id = i.message_id AND i.sender IS NOT DISTINCT FROM m.sender")"
expect_eq "reverse direction" 20 "$(harness_psql "SELECT count(*) FROM consumers.inbox i JOIN workers.messages m ON m.id = i.message_id")"
wait_counts chat-messages "c.completed === $N && c.active === 0 && c.waiting === 0" >/dev/null

# The relay's figures on the consumers daemon's /metrics (--outbox-status-url): read from this mode's status
# views (the extension's relay_worker_status() and partition_status, or the managed install's tables).
# status_metric <series with labels>: its value
status_metric() { curl -s "$CONSUMERS_URL/metrics" | awk -v s="$1 " 'index($0, s) == 1 { print $NF }'; }
unsent_consumers='chat_outbox_unsent{service="consumers",partition="0",queue="chat-messages"}'
harness_wait_value 20 = 0 status_metric "$unsent_consumers"
expect_eq "status read" 1 "$(status_metric chat_outboxd_outbox_status_read_ok)"
expect_eq "relay state running" 1 "$(status_metric 'chat_outbox_relay_state{state="running"}')"
harness_wait_value 20 = 1 status_metric 'chat_outbox_relay_service_state{service="consumers",state="running"}'
expect_eq "workers' backlog" 0 "$(status_metric 'chat_outbox_unsent{service="workers",partition="0",queue="chat-replies"}')"
# Redis stopped: the relay backs off and a message waits, on /metrics too; both clear once Redis is back
harness_redis_stop
harness_psql "SELECT consumers.send_message(1, 'while redis is down')" >/dev/null
harness_wait_value 20 = 1 status_metric 'chat_outbox_relay_state{state="backing off"}'
# a relay that cannot relay a service is not running for it
expect_eq "consumers' service state while Redis is down" 0 \
	"$(status_metric 'chat_outbox_relay_service_state{service="consumers",state="running"}')"
expect_eq "backlog while Redis is down" 1 "$(status_metric "$unsent_consumers")"
harness_redis_start_again
harness_wait_value 30 = 0 status_metric "$unsent_consumers"
harness_wait_value 20 = 1 status_metric 'chat_outbox_relay_state{state="running"}'
wait_inbox workers $((N + 1)) 60
echo "ok   --outbox-status-url: the relay's state and the backlog per partition on /metrics, backing off and back"
# a start logs no failed read: the first read waits for the status connection
if grep -F "outbox status: cannot read" "$H_DIR/consumers.log"; then fail "a failed status read was logged"; fi
echo "PASS"
