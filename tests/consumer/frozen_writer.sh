#!/usr/bin/env bash
# consumer.frozen_writer: a consumer frozen (SIGSTOP, a paused VM) while its inbox write is under way
# does not hold the service's inbox lock, so the service's other consumers go on writing. The write
# goes to Postgres as one pipeline (the lock, the insert, one Sync), so once Postgres has it, it runs
# and commits without the daemon. A write sent statement by statement would leave the session of a
# consumer frozen after its lock was granted idle in transaction, holding the lock, and every other
# consumer of the service would wait until it resumed.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-frozen-writer

# A session of ours holds the inbox lock, so that consumer A's write waits for it inside Postgres.
inbox_lock_hold workers

peer add t-frozen-a 5 >"$H_DIR/ids-a.txt"
daemon_start a.log --service workers --queue t-frozen-a
A=$DAEMON_PID
# A's write is in Postgres, waiting for the lock
harness_wait_value 20 -eq 1 inbox_lock_waiters workers
kill -STOP "$A"
inbox_lock_release # the lock is free: A's write takes it while A is frozen

# A's write commits without A: its rows are in the inbox and its session no longer holds the lock
wait_inbox workers 5 20
harness_wait_value 20 -eq 0 advisory_lock_holders || fail "a session holds the inbox lock while its consumer is frozen: $(advisory_lock_sessions)"
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
