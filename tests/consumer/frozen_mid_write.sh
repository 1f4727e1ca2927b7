#!/usr/bin/env bash
# consumer.frozen_mid_write: a consumer frozen (SIGSTOP, a paused VM) in the middle of a large inbox write
# holds the service's inbox lock for a bounded time only, so the service's other consumers go on writing.
# consumer.frozen_writer covers a write that reached Postgres whole; this one is larger than the socket's
# buffers both ways: when the lock is granted, part of the write may still sit in the frozen consumer's
# own buffers (Postgres would wait for it holding the lock), and its result cannot all be sent (Postgres
# would block on the full socket holding the lock). The lock is taken only once Postgres has read the
# write's values, and a reader that stops is cut off after --inbox-stall-timeout (docs/daemon.md, step 4).
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-frozen-mid-write
COUNT=60
export PEER_BODY_BYTES=262144 # 60 x 256 KiB: about 15 MiB each way, far more than loopback's socket buffers
STALL_MS=2000

# A session of ours holds the inbox lock, so that consumer A's write waits for it inside Postgres.
inbox_lock_hold workers

peer add t-mid-a "$COUNT" >"$H_DIR/ids-a.txt"
daemon_start a.log --service workers --queue t-mid-a --batch-size "$COUNT" --inbox-stall-timeout "$STALL_MS"
A=$DAEMON_PID
harness_wait_value 60 -eq 1 inbox_lock_waiters workers
kill -STOP "$A"
inbox_lock_release # the lock is free: A's write takes it while A is frozen

# Whatever A's write still waits for (the rest of its input, or A to read its result), the lock is
# released within the bound: far less than this wait, which only a lock held without bound exhausts.
harness_wait_value 60 -eq 0 advisory_lock_holders || fail "a session holds the inbox lock while its consumer is frozen: $(advisory_lock_sessions)"
echo "ok   the frozen consumer's write released the inbox lock"

# Consumer B, on another queue of the same service, writes while A stays frozen.
PEER_BODY_BYTES=0 peer add t-mid-b 5 >"$H_DIR/ids-b.txt"
daemon_start b.log --service workers --queue t-mid-b
B=$DAEMON_PID
wait_counts t-mid-b "c.completed === 5 && c.active === 0" 30 >/dev/null
echo "ok   another consumer of the service writes while one is frozen"

# A resumes: its write either committed (its rows are there) or was cut off and is written again; each
# message is stored once, A's in queue order.
kill -CONT "$A"
wait_counts t-mid-a "c.completed === $COUNT && c.active === 0" 60 >/dev/null
expect_eq "inbox rows" $((COUNT + 5)) "$(inbox_count workers)"
expect_eq "rows stored twice" 0 "$(harness_psql "SELECT count(*) - count(DISTINCT message_id) FROM workers.inbox")"
harness_psql "SELECT message_id FROM workers.inbox WHERE message_id::text IN ($(sed "s/.*/'&'/" "$H_DIR/ids-a.txt" | paste -sd,)) ORDER BY seq" >"$H_DIR/seq-a.txt"
expect_eq "A's rows in queue order" "" "$(diff "$H_DIR/ids-a.txt" "$H_DIR/seq-a.txt" | head -5)"
expect_eq "bodies stored whole" 0 "$(harness_psql "SELECT count(*) FROM workers.inbox WHERE octet_length(body) NOT IN ($PEER_BODY_BYTES, 2, 3)")"
daemons_stop "$A" "$B"
echo "PASS"
