#!/usr/bin/env bash
# tests/cluster/relay.sh - chat-outbox-relay on a Redis Cluster (redis-cluster://): 3 masters and 3
# replicas (cluster-node-timeout 2000, appendonly yes), one service of 6 partitions spread over the
# masters, real bullmq Workers on ioredis Cluster connections consuming every partition's queue
# ({chat-messages-p<p>}), while 12 chats send: a master SIGKILLed mid-stream (the cluster's own
# failover), then a reshard under traffic (redis-cli --cluster reshard moves a partition's slot to
# another master). Counts lost, twice and out of order, and records the gap. See relay.mjs.
. "$(dirname "$0")/../harness/lib.sh"
harness_init cluster-relay
cluster_start
REDIS_URL=$CLUSTER_URL
HARNESS_PG_MANAGED=1 harness_pg_start
export REDIS_URL PGURL H_DIR
harness_psql "SELECT chat_outbox.set_partitions('consumers', 6)" >/dev/null
# WAIT for one replica on every master a pass wrote to: what the dead master alone held goes again
relay_start r1 --redis-min-replicas 1 --redis-timeout 1000
cd "$H_ROOT/tests" && node cluster/relay.mjs
grep "redis cluster:" "$H_DIR/relay-r1.log" | sed 's/^[^ ]* //'
cluster_relay_followed "$H_DIR/relay-r1.log"
