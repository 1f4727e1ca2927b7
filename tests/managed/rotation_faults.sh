#!/usr/bin/env bash
# tests/managed/rotation_faults.sh - tests/extension/rotation_faults.sh's twin in the managed mode: the
# outbox's rotation survives chat-outbox-relay's and Postgres's crashes (chat_outbox.settings.retention
# = 1 s: a rotation step every purge round, 5 s; a sender sending throughout, a real bullmq Worker processing):
#   1. the relay SIGKILLed while it waits inside a rotation step (held there by a lock this test takes on
#      the service's rotation row), then started again by this test. Its session goes on waiting (Postgres
#      learns that the client is gone only when it answers it), and the new relay's step waits behind it;
#      the lock released, the dead relay's session ends, and the rotation goes on;
#   2. Postgres restarted (immediate) while the relay waits the same way: the same relay process
#      reconnects by itself (backing off, logged once each way), and the rotation goes on;
#   3. a partition count change (1 -> 4) during the stream, with the rotation going on.
# Checks: every stored message processed exactly once and each chat in the order sent (lost / twice /
# out of order counted; the 4 new queues read from Redis), no outbox row updated or deleted, and the
# rotation truncated generations after each fault. What both twins do is tests/harness/rotation.sh.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
relay_managed_env managed-rotation-faults
PROCESSED=$H_DIR/processed.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"
. "$H_ROOT/tests/extension/delivery.sh"
. "$H_ROOT/tests/harness/rotation.sh"

q "UPDATE chat_outbox.settings SET retention = '1 second'"
relay_start rot
start_stream

# 1. the relay killed inside a rotation step, and started again
rotation_held_by_relay
dead=$(rotation_waiters)
kill -9 "$RELAY_PID"
relay_start rot-again
new_waiter() { rotation_waiters | grep -vx "$dead" >/dev/null; }
harness_wait_for 30 new_waiter || fail "the restarted relay never waited inside a rotation step"
echo "ok   the restarted relay waits inside a rotation step; the dead relay's session: $(rotation_waiters | grep -cx "$dead") waiting"
t=$(truncated)
release_rotation
dead_session_gone() { [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE pid = $dead")" = 0 ]; }
harness_wait_for 30 dead_session_gone || fail "the SIGKILLed relay's session did not end"
goes_on "the relay SIGKILLed inside a rotation step" "$t"

# 2. Postgres restarted while the relay waits inside a rotation step; the relay is not restarted
restart_postgres_in_rotation
harness_wait_value 30 -ge 1 relay_log_count 'postgres back' || fail "the relay did not reconnect"
kill -0 "$RELAY_PID" || fail "the relay exited when Postgres restarted"
expect_eq "Postgres lost, logged by the relay" 1 "$(relay_log_count 'postgres unreachable')"
goes_on "Postgres restarted inside a rotation step" "$TRUNCATED_BEFORE"

# 3. the partition count changes during the stream
change_partitions_in_stream
verify_rotation_faults
