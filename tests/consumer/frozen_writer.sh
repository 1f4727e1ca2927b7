#!/usr/bin/env bash
# consumer.frozen_writer: a consumer frozen (SIGSTOP, a paused VM) while its inbox write is under way
# does not hold the service's inbox lock, so the service's other consumers go on writing. The write
# goes to Postgres as one pipeline (the lock, the insert, one Sync), so once Postgres has it, it runs
# and commits without the daemon. A write sent statement by statement would leave the session of a
# consumer frozen after its lock was granted idle in transaction, holding the lock, and every other
# consumer of the service would wait until it resumed.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-frozen-writer
LOCK="pg_catalog.hashtext('chat_outbox.inbox:workers')"

# A session of ours holds the inbox lock, so that consumer A's write waits for it inside Postgres.
mkfifo "$H_DIR/hold.fifo"
psql -XAtq "$PGURL" <"$H_DIR/hold.fifo" >"$H_DIR/hold.out" 2>&1 &
harness_track $!
exec 7>"$H_DIR/hold.fifo"
echo "BEGIN; SELECT pg_catalog.pg_advisory_xact_lock($LOCK); SELECT 'held';" >&7
harness_wait_for 10 grep -q held "$H_DIR/hold.out"

peer add t-frozen-a 5 >"$H_DIR/ids-a.txt"
daemon_start a.log --service workers --queue t-frozen-a
A=$DAEMON_PID
# A's write is in Postgres, waiting for the lock
waiting_for_lock() { harness_psql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'chat-outboxd workers inbox' AND wait_event = 'advisory'"; }
harness_wait_value 20 -eq 1 waiting_for_lock
kill -STOP "$A"
echo "COMMIT;" >&7 # the lock is free: A's write takes it while A is frozen
exec 7>&-

# A's write commits without A: its rows are in the inbox and its session no longer holds the lock
wait_inbox workers 5 20
lock_holders() { harness_psql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"; }
harness_wait_value 20 -eq 0 lock_holders || fail "a session holds the inbox lock while its consumer is frozen: $(harness_psql "SELECT pid, state, application_name FROM pg_stat_activity WHERE pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory')")"
echo "ok   the frozen consumer's write committed and released the inbox lock"

# Consumer B, on another queue of the same service, writes while A stays frozen.
peer add t-frozen-b 5 >"$H_DIR/ids-b.txt"
daemon_start b.log --service workers --queue t-frozen-b
B=$DAEMON_PID
wait_inbox workers 10 30
echo "ok   another consumer of the service writes while one is frozen"

kill -CONT "$A"
wait_counts t-frozen-a "c.completed === 5 && c.active === 0" 30 >/dev/null
wait_counts t-frozen-b "c.completed === 5 && c.active === 0" 30 >/dev/null
expect_eq "inbox rows" 10 "$(inbox_count workers)"
harness_psql "SELECT message_id FROM workers.inbox ORDER BY seq" >"$H_DIR/seq.txt"
expect_eq "inbox order = queue order" "" "$(cat "$H_DIR/ids-a.txt" "$H_DIR/ids-b.txt" | diff - "$H_DIR/seq.txt" | head -5)"
daemons_stop "$A" "$B"
echo "PASS"
