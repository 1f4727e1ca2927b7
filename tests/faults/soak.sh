#!/usr/bin/env bash
# tests/faults/soak.sh - the chaos soak. CI runs a short one; for longer:
#   tests/faults/soak.sh --seconds 1800 [--seed N]
# Topologies:
#   (default)          both directions, one chat-outboxd per service, one Redis (soak.mjs)
#   --topology scaled  one service with four partitions on two Redis servers, two consumers (a third
#                      comes and goes) and three gateways (scaled.mjs); --scripted runs each of its
#                      faults once in a fixed order instead of at random (the test faults.scaled)
#   --topology ha      scripts/cluster.sh's topology: Patroni pair, Redis under Sentinel, gateways
#                      behind HAProxy (soak_ha.sh)
#   --topology ha-cluster  the same with a Redis Cluster (3 masters, 3 replicas) instead of Sentinel
#                      (scripts/cluster.sh's CLUSTER_REDIS=cluster); its Redis fault kills a master
#                      that serves a queue's slot
case " $* " in *" --topology ha "* | *" --topology ha-cluster "*) exec "$(dirname "$0")/soak_ha.sh" "$@" ;; esac
. "$(dirname "$0")/../harness/lib.sh"
if [[ " $* " == *" --topology scaled "* ]]; then
	. "$H_ROOT/tests/harness/shards.sh"
	harness_init faults-scaled
	harness_redis_start
	shard1_start
	REDIS_URL="$REDIS_URL $SHARD1_URL" harness_pg_start
	daemon_export_settings
	REDIS_URL=redis://127.0.0.1:$REDIS_PORT # shard 0, for the peers' Redis controls
	CHAT_OUTBOXD_REDIS_URL="$REDIS_URL $SHARD1_URL"
	harness_export_controls
	SHARD1_START=$(shard1_cmd)
	SHARD1_PIDFILE=$SHARD1_DIR/redis.pid
	ports=()
	for _ in 1 2 3 4 5 6; do ports+=("$(harness_free_port)"); done
	DAEMON_PORTS=$(IFS=,; echo "${ports[*]}")
	export CHAT_OUTBOXD_REDIS_URL SHARD1_PORT SHARD1_URL SHARD1_START SHARD1_PIDFILE DAEMON_PORTS
	cd "$(dirname "$0")"
	rc=0
	node scaled.mjs --seconds 75 "$@" 2>>"$H_DIR/daemon.log" || rc=$?
	kill "$(cat "$SHARD1_PIDFILE")" 2>/dev/null || true # the peer may have restarted it under a new pid
	exit $rc
fi
daemon_env faults-soak
harness_export_controls
export DAEMON_PORTS="$(harness_free_port),$(harness_free_port)"
cd "$(dirname "$0")"
node soak.mjs --seconds 75 "$@" 2>>"$H_DIR/daemon.log"
