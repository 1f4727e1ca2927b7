#!/usr/bin/env bash
# consumer.lost_lock_order: locks that expire while the daemon holds two batches (Redis hung longer
# than --lock-duration while the first batch's inbox write waits) never let newer jobs overtake
# them. The first batch is written anyway (the inbox dedupes); so is the prefetched one, in its place,
# before anything fetched later. Before, the prefetched jobs were dropped, the daemon fetched on, and
# the dropped ones reached the inbox after the stalled check, behind newer messages of their chat.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-lost-lock-order
Q=t-lost-lock

# The inbox write waits: a session of ours holds the service's inbox lock (docs/daemon.md).
mkfifo "$H_DIR/hold.fifo"
psql -XAtq "$PGURL" <"$H_DIR/hold.fifo" >"$H_DIR/hold.out" 2>&1 &
harness_track $!
exec 7>"$H_DIR/hold.fifo"
echo "BEGIN; SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('chat_outbox.inbox:workers')); SELECT 'held';" >&7
harness_wait_for 10 grep -q held "$H_DIR/hold.out"

peer add $Q 10 >"$H_DIR/ids.txt"
daemon_start daemon.log --service workers --queue $Q --batch-size 5 --lock-duration 1000 --stalled-interval 2000
# batch 1 (jobs 1-5) waits for the lock, batch 2 (6-10) is prefetched meanwhile
wait_counts $Q "c.active === 10" 20 >/dev/null

# Redis hangs past the locks' expiry; the next renewal finds every lock gone
kill -STOP "$(cat "$REDIS_PIDFILE")"
sleep 2.5 # longer than --lock-duration 1000: the expiry is the fault itself
kill -CONT "$(cat "$REDIS_PIDFILE")"
harness_wait_for 20 grep -q "lost the lock of job $(head -1 "$H_DIR/ids.txt")" "$H_DIR/daemon.log"
echo "ok   the daemon lost the locks of the jobs it held"

peer add $Q 5 >>"$H_DIR/ids.txt" # newer jobs of the same chat, waiting
echo "COMMIT;" >&7 # the inbox write goes on
exec 7>&-

wait_inbox workers 15 60
harness_psql "SELECT message_id FROM workers.inbox ORDER BY seq" >"$H_DIR/seq.txt"
expect_eq "inbox order = queue order" "" "$(diff "$H_DIR/ids.txt" "$H_DIR/seq.txt" | head -5)"
# nothing lost: the stalled check requeues the jobs whose locks expired, which come back as duplicates
wait_counts $Q "c.completed === 15 && c.active === 0 && c.waiting === 0" 60 >/dev/null
expect_eq "inbox rows" 15 "$(inbox_count workers)"
echo "PASS"
