#!/usr/bin/env bash
# tests/extension/rotation_faults.sh - the outbox's rotation survives the relay's and Postgres's
# crashes (chat_outbox.retention = 1s, a sender sending throughout, a real bullmq Worker processing):
#   1. the relay SIGKILLed in the middle of a rotation step: held there by a lock this test takes on
#      the service's rotation row, killed once pg_stat_activity shows it waiting inside outbox_rotate;
#      the cluster's crash recovery rolls the step back (and ends the holding session), and the
#      rotation goes on;
#   2. Postgres restarted (immediate) while the relay waits the same way;
#   3. a partition count change (1 -> 4) during the stream, with the rotation going on.
# Checks: every stored message processed exactly once and each chat in the order sent (lost / twice /
# out of order counted; the 4 new queues read from Redis), no outbox row updated or deleted, and the
# rotation truncated generations after each fault. tests/managed/rotation_faults.sh is its twin in
# the managed mode; what both do is tests/harness/rotation.sh.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-rotation-faults
harness_redis_start
harness_pg_start "" "chat_outbox.retention = '1s'"
export REDIS_URL PGURL
PROCESSED=$H_DIR/processed.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"
. "$H_ROOT/tests/extension/delivery.sh"
. "$H_ROOT/tests/harness/rotation.sh"

relay_pid() { q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'"; }

start_stream

# 1. the relay killed inside a rotation step
rotation_held_by_relay
before=$(relay_pid)
t=$(truncated)
count_outbox_changes
kill -9 "$before"
exec {HOLD_FD}>&- # the crash recovery ended the holding session too
relay_back() { [ -n "$(relay_pid)" ] && [ "$(relay_pid)" != "$before" ]; }
harness_wait_for 60 relay_back || fail "the relay did not come back"
goes_on "the relay SIGKILLed inside a rotation step" "$t"

# 2. Postgres restarted while the relay waits inside a rotation step
restart_postgres_in_rotation
goes_on "Postgres restarted inside a rotation step" "$TRUNCATED_BEFORE"

# 3. the partition count changes during the stream
change_partitions_in_stream
verify_rotation_faults
