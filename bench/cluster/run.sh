#!/usr/bin/env bash
# bench/cluster/run.sh - the extension's relay on a Redis Cluster against one Redis, in the same run: delivered
# msg/s and latency from send_message to a bullmq Worker, side by side (bench/cluster/README.md says how).
# One Postgres with the extension (6 partitions), one redis-server and a cluster of 3 masters and 3 replicas
# (tests/harness/redis_cluster.sh), all with appendonly yes, appendfsync everysec; the rounds alternate the
# relay's chat_outbox.redis_url between the two (a reload), each round bench/cluster/deliver.mjs.
# Env: ROUNDS (3), BACKLOG (20000), RATE (200), DURATION (10 s). A benchmark, not a test: the figures depend on
# the machine; run it on an idle one (uptime is printed before and after).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../tests/harness/lib.sh"
ROUNDS=${ROUNDS:-3}
export BACKLOG=${BACKLOG:-20000} RATE=${RATE:-200} DURATION=${DURATION:-10}
harness_init bench-cluster
cluster_start
CLUSTER=$CLUSTER_URL
harness_redis_start
SINGLE=$REDIS_URL
harness_pg_start "" "shared_buffers = '256MB'"
harness_psql "SELECT chat_outbox.set_partitions('consumers', 6)" >/dev/null
export PGURL CLUSTER_PORTS SINGLE_PORT=$REDIS_PORT
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $($HARNESS_REDIS_SERVER --version | cut -d' ' -f1-3)"
echo "# commit $(git -C "$HERE" rev-parse --short HEAD)$(git -C "$HERE" diff --quiet HEAD || echo '+changes'); rounds=$ROUNDS backlog=$BACKLOG rate=$RATE/s for $DURATION s"
echo "# before: $(uptime)"
for ((k = 1; k <= ROUNDS; k++)); do
	for mode in single cluster; do
		url=$SINGLE && [ "$mode" = single ] || url=$CLUSTER
		harness_psql "ALTER SYSTEM SET chat_outbox.redis_url = '$url'"
		harness_psql "SELECT pg_reload_conf()" >/dev/null
		# one message through first: the relay is on the new URL, its queues made
		harness_psql "SELECT consumers.send_message(1, 'warm-up')" >/dev/null
		harness_wait_for 30 bash -c "[ \"\$(psql -XAtq '$PGURL' -c 'SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL')\" = 0 ]"
		echo "round $k  $(cd "$HERE" && node deliver.mjs "$mode")"
	done
done
echo "# after: $(uptime)"
