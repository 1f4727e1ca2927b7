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
# what the daemons' cluster links logged of the failover: the masters after it, and the home slots that moved
grep -h "home slot\|masters .*, were" "$H_DIR/daemon.log" | sed 's/^[^ ]* [^ ]* [^ ]* [^ ]* //' | sort -u
crossslot=$(grep -c "CROSSSLOT" "$H_DIR/daemon.log" || true)
[ "$crossslot" = 0 ] || fail "the daemons logged $crossslot CROSSSLOT error(s): a script's keys in several slots"
# the daemons followed the reshard: a command on the moved partition got MOVED and went to the new master
moved=$(grep -c "moved to 127.0.0.1:$(cat "$H_DIR/reshard-target")" "$H_DIR/daemon.log" || true)
[ "$moved" -ge 1 ] || fail "the daemons logged no MOVED to the reshard's target"
echo "the daemons followed MOVED to the reshard's target $moved time(s), ASK $(grep -c ": ASK to " "$H_DIR/daemon.log" || true) time(s)"
