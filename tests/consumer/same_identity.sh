#!/usr/bin/env bash
# consumer.same_identity: two processes with one --identity never both consume. Daemon A is frozen
# (SIGSTOP, a paused VM or pod) with jobs in hand and its Redis connections are cut (CLIENT KILL: a
# network cut), so the check at start lets a replacement B start under the same identity; B takes the
# partition over once A's lease expires; then A resumes while messages keep coming. A's renewal is
# refused (the lease holds B's process token, not A's): A logs the loss once and never consumes again
# beside B. Counted per chat: every message in the inbox once, in the order it was queued.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-same-identity
Q=t-same-identity
CHATS=4
FLAGS="--service workers --queue $Q --identity x --lease-ttl 1000 --batch-size 10"

add() { # add <count per chat>: every chat at once; appends each chat's new ids to ids-<chat>.txt
	local pids=() c
	for c in $(seq 1 $CHATS); do
		peer add $Q "$1" "$c" >>"$H_DIR/ids-$c.txt" &
		pids+=($!)
	done
	for c in "${pids[@]}"; do wait "$c" || fail "adding jobs failed"; done
}
total() { cat "$H_DIR"/ids-*.txt | wc -l; }
lease() { rcli GET "bull:$Q:lease"; }

add 100
daemon_start a.log $FLAGS
A=$DAEMON_PID
harness_wait_value 30 -ge 100 inbox_count workers
echo "A holds the lease as $(lease)"

add 100
kill -STOP "$A"
# A's connections cut, as by a network partition: the start-up check no longer sees a live "x"
for id in $(rcli CLIENT LIST | grep 'name=chat-outboxd:' | sed 's/^id=\([0-9]*\) .*/\1/'); do
	rcli CLIENT KILL ID "$id" >/dev/null || true
done
daemon_start b.log $FLAGS
B=$DAEMON_PID
harness_wait_for 30 grep -q "lease acquired" "$H_DIR/b.log"
echo "B holds the lease as $(lease), A frozen"
add 100

kill -CONT "$A"
harness_wait_for 30 grep -q "lease lost" "$H_DIR/a.log"
echo "A resumed and lost the lease"
add 100
wait_inbox workers "$(total)" 60
wait_counts $Q "c.completed === $(total) && c.active === 0 && c.waiting === 0" 60 >/dev/null

# A never took the lease back while B held it, B never lost it, and A said so once
expect_eq "A's lease acquired" 1 "$(grep -c 'lease acquired' "$H_DIR/a.log")"
expect_eq "A's lease lost lines" 1 "$(grep -c 'lease lost' "$H_DIR/a.log")"
expect_eq "B's lease lost lines" 0 "$(grep -c 'lease lost' "$H_DIR/b.log" || true)"

expect_eq "inbox rows (none lost, none twice)" "$(total)" "$(inbox_count workers)"
expect_eq "distinct messages" "$(total)" "$(harness_psql "SELECT count(DISTINCT message_id) FROM workers.inbox")"
for c in $(seq 1 $CHATS); do
	harness_psql "SELECT message_id FROM workers.inbox WHERE chat_id = $c ORDER BY seq" >"$H_DIR/seq-$c.txt"
	expect_eq "chat $c: inbox order = queue order" "" "$(diff "$H_DIR/ids-$c.txt" "$H_DIR/seq-$c.txt" | head -3)"
done
daemons_stop "$A" "$B"
echo "PASS"
