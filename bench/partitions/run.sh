#!/usr/bin/env bash
# bench/partitions/run.sh - what the relay's single worker costs per message with partitions and
# Redis shards (recorded in docs/journal/partitions.md). Not a test.
# For 1 and 2 Redis servers and 1, 2 and 4 partitions: a backlog of BACKLOG messages over 100
# chats is built with the relay paused, then drained; prints the drain time, messages/s, ms per
# batch of BATCH rows, the relay worker's CPU per message (it is a Postgres backend: the claim's
# SQL runs in it) and the Redis servers' CPU per message (both shards together). The relay is one process per server
# and one transaction per pass, so its time per message is the ceiling of the whole producing side.
# Env: BACKLOG (50000), BATCH (500), ROUNDS (3, the median is printed).
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
. "$(dirname "$0")/../lib/ticks.sh"
. "$H_ROOT/tests/harness/shards.sh"
BACKLOG=${BACKLOG:-50000} BATCH=${BATCH:-500} ROUNDS=${ROUNDS:-3}
harness_init bench-partitions
harness_redis_start
shard1_start
harness_pg_start "" "chat_outbox.batch_size = $BATCH" "shared_buffers = '256MB'" "chat_outbox.retention = 0"
setting() { q "ALTER SYSTEM SET chat_outbox.$1 = '$2'" && q "SELECT pg_reload_conf()" >/dev/null; sleep 0.5; }
now_ms() { date +%s%3N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# backlog=$BACKLOG batch_size=$BATCH rounds=$ROUNDS (median)"
printf '%-7s %-10s %9s %10s %9s %17s %17s\n' shards partitions drain_ms msgs/s ms/batch relay_cpu_us/msg redis_cpu_us/msg
for shards in 1 2; do
	if [ "$shards" = 1 ]; then setting redis_url "$REDIS_URL"; else setting redis_url "$REDIS_URL $SHARD1_URL"; fi
	for parts in 1 2 4; do
		svc=b${shards}_$parts
		q "SELECT chat_outbox.create_service('$svc', partitions => $parts)" >/dev/null
		results=()
		for round in $(seq "$ROUNDS"); do
			setting relay_enabled off
			q "SELECT count($svc.send_message(g % 100, 'backlog message ' || g)) FROM generate_series(1, $BACKLOG) g" >/dev/null
			relay_pid=$(q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'")
			c0=$(ticks "$relay_pid")
			r0=$(( $(ticks "$(cat "$REDIS_PIDFILE")") + $(ticks "$(cat "$SHARD1_DIR/redis.pid")") ))
			t0=$(now_ms)
			setting relay_enabled on
			harness_wait_for 300 bash -c "[ \$(psql -XAtq '$PGURL' -c 'SELECT count(*) FROM $svc.outbox WHERE sent_at IS NULL') -eq 0 ]"
			ms=$(( $(now_ms) - t0 - 500 )) # the reload's sleep is not the relay's
			cpu=$(( ($(ticks "$relay_pid") - c0) * 10 ))
			rcpu=$(( ($(ticks "$(cat "$REDIS_PIDFILE")") + $(ticks "$(cat "$SHARD1_DIR/redis.pid")") - r0) * 10 ))
			results+=("$ms $cpu $rcpu")
			rcli FLUSHALL >/dev/null
			rcli1 FLUSHALL >/dev/null
		done
		ms=$(printf '%s\n' "${results[@]}" | awk '{print $1}' | median)
		cpu=$(printf '%s\n' "${results[@]}" | awk '{print $2}' | median)
		rcpu=$(printf '%s\n' "${results[@]}" | awk '{print $3}' | median)
		printf '%-7s %-10s %9d %10d %9.2f %17.1f %17.1f\n' "$shards" "$parts" "$ms" $((BACKLOG * 1000 / ms)) \
			"$(echo "$ms * $BATCH / $BACKLOG" | bc -l)" "$(echo "$cpu * 1000 / $BACKLOG" | bc -l)" \
			"$(echo "$rcpu * 1000 / $BACKLOG" | bc -l)"
	done
done
