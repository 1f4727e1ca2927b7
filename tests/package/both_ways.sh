# tests/package/both_ways.sh - messages both ways between the two installed services (sourced by
# package.install and package.systemd, whose daemons run from the packages):
#   send <n> <tag>   n messages each way, one transaction each way
#   both_ways <what> every message sent so far is in the other service's inbox, once
sent=0
send() {
	q "SELECT count(consumers.send_message(1 + g % 3, '$2 ' || g)) FROM generate_series(1, $1) g" >/dev/null
	q "SELECT count(workers.send_message(42, '$2 reply ' || g)) FROM generate_series(1, $1) g" >/dev/null
	sent=$((sent + $1))
}
both_ways() {
	wait_inbox workers "$sent" 60
	wait_inbox consumers "$sent" 60
	expect_eq "$1: workers.inbox" "$sent|$sent" "$(q "SELECT count(*), count(DISTINCT i.message_id) FROM workers.inbox i JOIN consumers.messages m ON m.id = i.message_id")"
	expect_eq "$1: consumers.inbox" "$sent|$sent" "$(q "SELECT count(*), count(DISTINCT i.message_id) FROM consumers.inbox i JOIN workers.messages m ON m.id = i.message_id")"
	echo "ok   $1: $sent messages each way, each once"
}
