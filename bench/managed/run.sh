#!/usr/bin/env bash
# bench/managed/run.sh - figures for chat-outbox-relay on the managed install (docs/managed.md).
#   1. commit -> job visible in Redis over paced sends: woken by NOTIFY, then with the outbox
#      trigger disabled (the relay's poll alone, --poll-interval)
#   2. drain rate of a backlog built while Redis was down, and the relay's and Redis' CPU per row
# bench/managed/notify_cost.sh measures what the wake-up costs concurrent senders.
# Env: SENDS (500), PACE_MS (5), BACKLOG (50000), BATCH (500), POLL_MS (1000).
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
. "$(dirname "$0")/../lib/ticks.sh"
SENDS=${SENDS:-500} PACE_MS=${PACE_MS:-5} BACKLOG=${BACKLOG:-50000} BATCH=${BATCH:-500} POLL_MS=${POLL_MS:-1000}
relay_managed_env bench-managed
now_ms() { date +%s%3N; }
relay_start bench --batch-size "$BATCH" --poll-interval "$POLL_MS"
harness_wait_value 20 = running relay_status relay_state

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# chat-outbox-relay --batch-size $BATCH --poll-interval $POLL_MS; sends=$SENDS pace=${PACE_MS}ms backlog=$BACKLOG"
cd "$H_ROOT/tests"
echo "## 1. commit -> visible in Redis ($SENDS sends, one every $PACE_MS ms)"
echo "NOTIFY:             $(node "$H_ROOT/bench/relay/latency.mjs" "$SENDS" "$PACE_MS")"
q "ALTER TABLE consumers.outbox DISABLE TRIGGER wake_relay"
echo "poll ${POLL_MS} ms alone: $(node "$H_ROOT/bench/relay/latency.mjs" "$SENDS" "$PACE_MS")"
q "ALTER TABLE consumers.outbox ENABLE TRIGGER wake_relay"

echo "## 2. drain after a Redis outage ($BACKLOG rows)"
wait_key=bull:chat-messages:wait
base=$(rcli LLEN $wait_key)
harness_redis_stop
q "SELECT count(consumers.send_message(g % 100, 'backlog message ' || g)) FROM generate_series(1, $BACKLOG) g" >/dev/null
harness_redis_start_again
r0=$(ticks "$RELAY_PID") d0=$(ticks "$(cat "$REDIS_PIDFILE")")
t_up=$(now_ms)
read -r t_first t_done < <(node "$H_ROOT/bench/relay/wait_jobs.mjs" "$REDIS_PORT" $wait_key "$base" "$BACKLOG" 300 | sed 's/[a-z]*=//g')
echo "redis up -> first batch: $((t_first - t_up)) ms (backoff); first batch -> drained: $((t_done - t_first)) ms"
echo "drain rate: $(( BACKLOG * 1000 / (t_done - t_first + 1) )) rows/s"
echo "drain CPU per row: relay $(( ($(ticks "$RELAY_PID") - r0) * 10000 / BACKLOG )) us, redis $(( ($(ticks "$(cat "$REDIS_PIDFILE")") - d0) * 10000 / BACKLOG )) us"
