#!/usr/bin/env bash
# tests/cluster/extension.sh - the extension's relay (the background worker inside Postgres) on a Redis
# Cluster (chat_outbox.redis_url = 'redis-cluster://...'): the scenario of cluster.relay (relay.mjs: 3
# masters and 3 replicas, one service of 6 partitions spread over the masters, real bullmq Workers on
# ioredis Cluster connections, 12 chats sending; a master SIGKILLed mid-stream, then a reshard under
# traffic; lost, twice and out of order counted, the gap recorded), with the relay in Postgres.
. "$(dirname "$0")/../harness/lib.sh"
harness_init cluster-extension
cluster_start
REDIS_URL=$CLUSTER_URL
# WAIT for one replica on every master a pass wrote to: what the dead master alone held goes again
harness_pg_start "" "chat_outbox.redis_min_replicas = 1" "chat_outbox.redis_timeout = 1000"
export REDIS_URL PGURL H_DIR
harness_psql "SELECT chat_outbox.set_partitions('consumers', 6)" >/dev/null
cd "$H_ROOT/tests" && node cluster/relay.mjs
grep "chat_outbox relay: redis cluster:" "$H_DIR/postgres.log" | sed 's/^.*chat_outbox relay: //'
# the relay followed the reshard: its next batch to the moved partition got MOVED and went to the new master
moved=$(grep -c "moved to 127.0.0.1:$(cat "$H_DIR/reshard-target")" "$H_DIR/postgres.log" || true)
[ "$moved" -ge 1 ] || fail "the relay logged no MOVED to the reshard's target"
# what chat_outbox.status said of the cluster while the master was down, once per change
grep -E "chat_outbox relay: redis (unreachable|back)" "$H_DIR/postgres.log" | sed 's/^.*chat_outbox relay: //' | head -5
