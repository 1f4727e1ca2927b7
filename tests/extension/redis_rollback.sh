#!/usr/bin/env bash
# tests/extension/redis_rollback.sh - Redis comes back with less than it acknowledged (issue 36): the jobs it
# lost are relayed again, so every committed message reaches the receiver once, in each chat's order.
# A restart from an older copy (a backup restored), a SIGKILLed Redis that lost its last second of
# `appendfsync everysec`, a replica promoted without the last writes: Redis acknowledged a pass's jobs, the
# relay committed the pass (its rows are sent), and then Redis holds an older state without them.
#   1. N messages sent and processed by a real bullmq Worker (consume.mjs); the Worker stopped; Redis
#      stopped cleanly, its data dir copied (the "backup"), Redis started again.
#   2. M messages sent with no Worker running: the relay commits them and Redis holds their jobs (waiting).
#   3. Redis SIGKILLed, the copy of step 1 put back, Redis started again: the M jobs are gone from Redis
#      while the outbox says they were sent.
#   4. The Worker started again, K messages sent.
#   5. Once every K message is processed (the state step 4 caused), counted per message: lost (stored, never
#      processed), twice, out of order in its chat (one sender sending one message at a time, so a chat's
#      messages must arrive in created_at order: tests/extension/delivery.sh's delivery_counts).
# The receiver semantics are the inbox's: a message counts once per id. A job processed twice by the Worker
# (a re-sent row whose job Redis had already completed is a BullMQ duplicate, not a second job) is printed,
# but the verdict counts ids, as chat-outboxd's inbox does (INSERT ... ON CONFLICT DO NOTHING).
# The relay must also say what it did: a log line containing `sending them again`.
# Runs the extension's relay worker; in managed mode (tests/managed/in_managed_mode.sh: CTest
# managed.relay.redis_rollback), chat-outbox-relay.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init redis-rollback
harness_redis_start
harness_pg_start
export REDIS_URL PGURL
HERE=$H_ROOT/tests/extension
PROCESSED=$H_DIR/processed.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"
. "$HERE/delivery.sh"

N=100 M=100 K=100        # messages of each step (send.mjs: chats 1-5 in turn, one sender)
ORDER_GRACE=15           # seconds the rest may take to arrive once every K message was processed
COPY=$H_DIR/redis-backup # the copy of Redis's data dir taken in step 1

consumer_start() { # consumer_start <name>: the Worker, logging to consumer-<name>.log
	node "$HERE/consume.mjs" "$PROCESSED" >"$H_DIR/consumer-$1.log" 2>&1 &
	CONSUMER_PID=$!
	harness_track "$CONSUMER_PID"
	harness_wait_for 20 grep -q ready "$H_DIR/consumer-$1.log"
}
send() { node "$HERE/send.mjs" "$1" "$2" 0 >>"$H_DIR/sender-$2.log" 2>&1; } # send <count> <tag>
ids_of() { harness_psql "SELECT id FROM consumers.messages WHERE body LIKE '$1-%'"; } # a step's message ids
# every message of the step was processed by the Worker at least once
all_processed() { [ -z "$(ids_of "$1" | grep -vxFf "$PROCESSED")" ]; }
# how many messages of the step Redis holds a job of (its hash bull:chat-messages:<id>)
# shellcheck disable=SC2046 # one key per id
redis_held() { rcli exists $(ids_of "$1" | sed 's/^/bull:chat-messages:/'); }
redis_holds_all() { [ "$(redis_held "$1")" -eq "$(ids_of "$1" | wc -l)" ]; }

# 1. N delivered; the Worker stopped once Redis marked every job completed; Redis's data copied while stopped
consumer_start before
send "$N" n
verify_delivered "step 1: $N messages"
wait_counts chat-messages "c.completed >= $N && c.active === 0" >/dev/null
harness_stop_pid "$CONSUMER_PID"
harness_redis_stop
cp -a "$REDIS_DIR" "$COPY"
harness_redis_start_again
echo "ok   step 1: $N processed, Worker stopped, Redis's data copied ($(du -sh "$COPY" | cut -f1))"

# 2. M more, relayed and committed, their jobs waiting in Redis (no Worker takes them); a key of the
# test's own, written after the copy, tells step 3 that Redis came back with the copy's data (the jobs
# cannot: the relay sends them again at once)
rcli set rollback-probe after-copy >/dev/null
send "$M" m
harness_wait_for 30 relay_unsent_is 0 || fail "step 2: $(relay_status unsent) rows not relayed"
harness_wait_for 30 redis_holds_all m || fail "step 2: Redis does not hold every job of the $M messages"
echo "ok   step 2: $M relayed and committed (unsent $(relay_status unsent)), Redis holds their $M jobs"

# 3. Redis comes back with the copy of step 1: less than it acknowledged
harness_redis_kill
rm -rf "$REDIS_DIR"
cp -a "$COPY" "$REDIS_DIR"
harness_redis_start_again
expect_eq "step 3: Redis came back with the copy's data (the test's key written after the copy)" 0 "$(rcli exists rollback-probe)"

# 4. the Worker back, K more
consumer_start after
send "$K" k
harness_wait_for 60 all_processed k || fail "step 4: the $K messages sent after the restore were not all processed"
echo "ok   step 4: every one of the $K messages sent after the restore processed"

# 5. count: lost, twice, out of order per chat
harness_wait_for "$ORDER_GRACE" all_delivered || true # the rest, if it comes: the counts below say what did not
harness_psql "SELECT id, chat_id FROM consumers.messages ORDER BY chat_id, created_at, id" | tr '|' ' ' >"$H_DIR/stored-order.txt"
read -r lost twice ooo unstored < <(delivery_counts "$H_DIR/stored-order.txt" "$PROCESSED" "$PROCESSED.retaken" |
	sed 's/[^0-9 ]//g' | awk '{ print $1, $2, $3, $4 }')
lost_of() { ids_of "$1" | grep -vxcFf "$PROCESSED" || true; } # a step's messages never processed
echo "figures: stored $(stored) (N $N, M $M, K $K); lost $lost (N $(lost_of n), M $(lost_of m), K $(lost_of k));" \
	"twice 0 after dedupe by id ($twice processed twice by the Worker); out of order $ooo; not stored $unstored;" \
	"'sending them again' logged $(relay_log_lines 'sending them again') time(s)"
verdict=
[ "$lost" -eq 0 ] || verdict+=" $lost lost;"
[ "$ooo" -eq 0 ] || verdict+=" $ooo out of order;"
[ "$unstored" -eq 0 ] || verdict+=" $unstored processed but never stored;"
[ "$(relay_log_lines 'sending them again')" -ge 1 ] || verdict+=" the relay logged no 'sending them again';"
[ -z "$verdict" ] || fail "Redis rolled back to the copy of step 1:$verdict"
echo "ok   Redis rolled back: $(stored) stored, lost 0, twice 0 after dedupe by id, out of order 0; the relay sent them again"
