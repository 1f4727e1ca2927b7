#!/usr/bin/env bash
# tests/cluster/daemon.sh - chat-outboxd on a Redis Cluster (redis-cluster://): 3 masters and 3 replicas
# (tests/harness/redis_cluster.sh), chat-outbox-relay and three daemons on the cluster URL, both
# directions under traffic, a master SIGKILLed mid-stream, then a reshard under traffic; counts lost, stored
# twice, shown twice and out of order, and prints the gap after the kill and the pause around the reshard.
# See daemon.mjs.
. "$(dirname "$0")/../harness/lib.sh"
harness_init cluster-daemon
cluster_start
REDIS_URL=$CLUSTER_URL
HARNESS_PG_MANAGED=1 harness_pg_start
daemon_export_settings
DAEMON_PORTS="$(harness_free_port) $(harness_free_port) $(harness_free_port)"
export REDIS_URL PGURL H_DIR DAEMON_PORTS
harness_psql "SELECT chat_outbox.set_partitions('consumers', 6)" >/dev/null
harness_psql "SELECT chat_outbox.set_partitions('workers', 6)" >/dev/null
# WAIT for one replica on every master a pass wrote to: what the dead master alone held goes again
relay_start r1 --redis-min-replicas 1 --redis-timeout 1000
cd "$H_ROOT/tests" && node cluster/daemon.mjs 2>>"$H_DIR/daemon.log"
cluster_daemons_followed "$H_DIR/daemon.log"
