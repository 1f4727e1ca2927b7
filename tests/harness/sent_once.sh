# tests/harness/sent_once.sh - one sender's messages (consumers -> workers) and the check that each
# reached workers.inbox once, in send order per chat. Sourced after lib.sh; the suite runs a
# chat-outboxd --service workers --queue chat-messages.
#   sent_once_send <n>        n messages, one transaction each, to chats 1..3 in turn; $sent counts them
#   sent_once_verify <label>  waits for $sent rows in workers.inbox, then checks once each and the order
#   sent_once_chats_on <port>  on a cluster (tests/harness/redis_cluster.sh), with chat-messages in 6 or more
#                             partitions: the chats of 1..3 (comma-separated) whose queue that master serves
#   sent_once_absent <label> <after> <chats>  none of the messages after number <after> to those chats
#                             (comma-separated) is in workers.inbox
sent=0
sent_once_send() {
	local i
	for ((i = 0; i < $1; i++)); do
		sent=$((sent + 1))
		harness_psql "SELECT consumers.send_message($((sent % 3 + 1)), 'msg $sent')" >/dev/null
	done
}
sent_once_verify() {
	wait_inbox workers "$sent" 60
	expect_eq "$1: workers.inbox = consumers.messages, once each" "$sent|$sent" \
		"$(harness_psql "SELECT count(*), count(DISTINCT i.message_id) FROM workers.inbox i JOIN consumers.messages m
			ON m.id = i.message_id AND m.body = i.body AND m.chat_id = i.chat_id")"
	expect_eq "$1: order per chat" 0 "$(harness_psql "
		SELECT count(*) FROM (
			SELECT split_part(body, ' ', 2)::int AS n, lag(split_part(body, ' ', 2)::int) OVER (PARTITION BY chat_id ORDER BY seq) AS prev
			FROM workers.inbox) s WHERE prev IS NOT NULL AND prev > n")"
}
sent_once_absent() {
	expect_eq "$1" 0 "$(harness_psql "SELECT count(*) FROM workers.inbox i JOIN consumers.messages m ON m.id = i.message_id
		WHERE m.chat_id IN ($3) AND split_part(m.body, ' ', 2)::int > $2")"
}
sent_once_chats_on() {
	local c chats=""
	for c in 1 2 3; do [ "$(cluster_master_of "{chat-messages-p$c}")" != "$1" ] || chats="$chats${chats:+,}$c"; done
	echo "$chats"
}
