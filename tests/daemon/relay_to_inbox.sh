#!/usr/bin/env bash
# daemon.relay_to_inbox: messages sent with consumers.send_message() travel through the extension's relay
# (queue chat-messages) to chat-outboxd --service workers: each exactly once in workers.inbox, in send
# order per chat; and the reverse direction (workers.send_message -> chat-replies -> consumers.inbox), each
# with its sender (NULL when sent without one).
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-relay
N=200

daemon_start workers.log --service workers --queue chat-messages --batch-size 64
daemon_start consumers.log --service consumers --queue chat-replies
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
echo "PASS"
