#!/usr/bin/env bash
# scripts/cluster.sh - the production topology on one machine, for trying failovers by hand:
#   etcd (one member), a Patroni pair (PostgreSQL 15 with chat_outbox, synchronous replication),
#   a Redis master with two replicas and three sentinels (or, with CLUSTER_REDIS=cluster, a Redis Cluster
#   of three masters and three replicas), and for each service (consumers, workers)
#   two chat-outboxd gateways behind HAProxy; HAProxy also routes a port to the Postgres primary,
#   which the gateways use. Timings are chosen for failover in seconds (docs/ha.md, "Timings").
#
#   scripts/cluster.sh start    start everything; returns once HAProxy routes to every part (prints where each listens)
#   scripts/cluster.sh status   what runs, Patroni's, Sentinel's (or the Redis Cluster's) and HAProxy's view
#   scripts/cluster.sh stop     stop everything it started (by the pids it recorded)
#   scripts/cluster.sh restart <part>   start a part again after it was killed (redis-master, patroni-1, haproxy,
#                                       redis-<port> for a Redis Cluster node, ...)
#   scripts/cluster.sh haproxy-up       exit 0 when HAProxy's stats socket says every gateway and the Postgres leader UP
#   scripts/cluster.sh env      where each part listens, as shell assignments (for scripts and tests)
#
# Needs what scripts/setup.sh installs (the extension installed with `make install`, the daemon built in
# build/) and the Debian packages patroni, etcd-server, haproxy, redis-sentinel. State, logs and pids
# live in $CLUSTER_DIR (default build/cluster); ports start at $CLUSTER_PORT_BASE (default 27000).
# CLUSTER_REDIS=sentinel (the default) runs Redis under Sentinel; CLUSTER_REDIS=cluster runs a Redis Cluster
# instead (3 masters with $CLUSTER_REDIS_REPLICAS replicas each, default 2; cluster-node-timeout
# $CLUSTER_NODE_TIMEOUT, default 2000 ms; appendonly), and the extension's relay and every gateway use its
# redis-cluster:// URL; its nodes are named redis-<port> (`restart redis-<port>` starts a killed one again on
# its data: after a failover it rejoins as a replica). Two replicas per master, as the Sentinel variant has:
# with CLUSTER_REDIS_REPLICAS=1 a master's loss leaves the promoted replica alone, and redis_min_replicas = 1
# holds its partitions' rows until a replica is back (docs/ha.md, "What happens at a failover").
# `start` records these in $CLUSTER_DIR/redis.settings, which the later commands read.
# Everything listens on 127.0.0.1 and trusts local connections: a demonstration, not a hardened setup.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
D=${CLUSTER_DIR:-$ROOT/build/cluster}
B=${CLUSTER_PORT_BASE:-27000}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_USER=${PG_USER:-postgres}
CHAT_OUTBOXD=${CHAT_OUTBOXD:-$ROOT/build/daemon/chat-outboxd}

ETCD=$((B + 0)) ETCD_PEER=$((B + 1))
PG=($((B + 10)) $((B + 11))) REST=($((B + 20)) $((B + 21)))
PG_PRIMARY=$((B + 30)) HAPROXY_STATS=$((B + 31))
# cluster.sh names the Redis nodes by the port they started on, whichever is master now
REDIS_MASTER=$((B + 40)) REDIS_REPLICA=$((B + 41)) REDIS_REPLICA2=$((B + 42))
SENTINELS=($((B + 50)) $((B + 51)) $((B + 52)))
# the Redis kind a started cluster was given (recorded by start) holds for its later commands (stop, restart, env)
if [ "${1:-}" != start ] && [ -f "$D/redis.settings" ]; then
	. "$D/redis.settings"
fi
CLUSTER_REDIS=${CLUSTER_REDIS:-sentinel}
CLUSTER_NODE_TIMEOUT=${CLUSTER_NODE_TIMEOUT:-2000}
CLUSTER_REDIS_REPLICAS=${CLUSTER_REDIS_REPLICAS:-2}
[[ $CLUSTER_REDIS_REPLICAS =~ ^[12]$ ]] || { echo "cluster: CLUSTER_REDIS_REPLICAS is 1 or 2" >&2; exit 2; }
# a Redis Cluster's nodes (base+40 on, 3 masters and their replicas), and their cluster bus ports 10 above
# each, in the sentinels' place (not port + 10000, which may lie in the kernel's ephemeral range or the tests' ports)
CLUSTER_NODES=()
for ((i = 0; i < 3 * (1 + CLUSTER_REDIS_REPLICAS); i++)); do CLUSTER_NODES+=($((B + 40 + i))); done
# service:queue it consumes:gateway ports:HAProxy port
SERVICES=("consumers:chat-replies:$((B + 60)),$((B + 61)):$((B + 70))" "workers:chat-messages:$((B + 62)),$((B + 63)):$((B + 71))")

SENTINEL_URL="redis-sentinel://127.0.0.1:${SENTINELS[0]},127.0.0.1:${SENTINELS[1]},127.0.0.1:${SENTINELS[2]}/chat"
case $CLUSTER_REDIS in
sentinel) REDIS_URL=$SENTINEL_URL REDIS_PORTS=("$REDIS_MASTER" "$REDIS_REPLICA" "$REDIS_REPLICA2") ;;
cluster)
	REDIS_PORTS=("${CLUSTER_NODES[@]}")
	REDIS_URL="redis-cluster://$(printf '127.0.0.1:%s,' "${CLUSTER_NODES[@]}")"
	REDIS_URL=${REDIS_URL%,}
	;;
*) echo "cluster: CLUSTER_REDIS is sentinel or cluster, not $CLUSTER_REDIS" >&2; exit 2 ;;
esac
DB_URL="postgresql://postgres@127.0.0.1:${PG[0]},127.0.0.1:${PG[1]}/chat?target_session_attrs=read-write"
# the gateways go through HAProxy: it follows Patroni's leader and cuts sessions on a node that lost it
GATEWAY_DB_URL="postgresql://postgres@127.0.0.1:$PG_PRIMARY/chat"

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u "$PG_USER" -- "$@"; else "$@"; fi; }
alive() { [ -f "$D/pids/$1.pid" ] && kill -0 "$(cat "$D/pids/$1.pid")" 2>/dev/null; }

wait_for() { # wait_for <seconds> <what> <command...>
	local deadline=$(($(date +%s) + $1)) what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "cluster: timed out waiting for $what (logs in $D/log)" >&2; return 1; }
		sleep 0.2
	done
}

# run_bg <name> <command...>: start in the background, log to log/<name>.log, pid in pids/<name>.pid.
# The command must exec the long-running process (its pid is the one recorded).
run_bg() {
	local name=$1
	shift
	"$@" >>"$D/log/$name.log" 2>&1 &
	echo $! >"$D/pids/$name.pid"
}

start_etcd() {
	run_bg etcd etcd --name e1 --data-dir "$D/etcd" \
		--listen-client-urls "http://127.0.0.1:$ETCD" --advertise-client-urls "http://127.0.0.1:$ETCD" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
		--initial-cluster "e1=http://127.0.0.1:$ETCD_PEER"
	wait_for 20 etcd curl -sf "http://127.0.0.1:$ETCD/health"
}

# redis_node <name> <port> [args...]: exec one Redis node of the cluster (its data in $D/<name>)
redis_node() {
	local name=$1 port=$2
	shift 2
	mkdir -p "$D/$name"
	exec redis-server --port "$port" --bind 127.0.0.1 --dir "$D/$name" \
		--appendonly yes --appendfsync everysec --maxmemory-policy noeviction "$@"
}

# cluster_node <port>: exec one node of the Redis Cluster (its data and nodes.conf in $D/redis-<port>)
cluster_node() {
	local port=$1
	redis_node "redis-$port" "$port" --cluster-enabled yes --cluster-port $((port + 10)) \
		--cluster-config-file nodes.conf --cluster-node-timeout "$CLUSTER_NODE_TIMEOUT" --repl-diskless-sync-delay 0
}

# cluster_healthy: every node answers and says cluster_state:ok, and every replica has its master's data
# (a replica whose first sync failed would never be failed over to)
cluster_healthy() {
	local p info
	for p in "${CLUSTER_NODES[@]}"; do
		redis-cli -p "$p" CLUSTER INFO | grep -q '^cluster_state:ok' || return 1
		info=$(redis-cli -p "$p" INFO replication) || return 1
		! grep -q '^role:slave' <<<"$info" || grep -q '^master_link_status:up' <<<"$info" || return 1
	done
}

start_redis_cluster() {
	local p hosts=()
	for p in "${CLUSTER_NODES[@]}"; do
		run_bg "redis-$p" cluster_node "$p"
		hosts+=("127.0.0.1:$p")
	done
	for p in "${CLUSTER_NODES[@]}"; do wait_for 10 "redis node $p" redis-cli -p "$p" ping; done
	redis-cli --cluster create "${hosts[@]}" --cluster-replicas "$CLUSTER_REDIS_REPLICAS" --cluster-yes >"$D/log/cluster-create.log" 2>&1 ||
		{ cat "$D/log/cluster-create.log" >&2; return 1; }
	wait_for 60 "the Redis Cluster (cluster_state:ok, replicas synced)" cluster_healthy
}

start_redis() {
	local port
	[ "$CLUSTER_REDIS" = sentinel ] || { start_redis_cluster; return; }
	run_bg redis-master redis_node redis-master "$REDIS_MASTER"
	wait_for 10 "redis master" redis-cli -p "$REDIS_MASTER" ping
	# two replicas: after the master's loss one is promoted and the other still meets the relay's WAIT 1
	run_bg redis-replica redis_node redis-replica "$REDIS_REPLICA" --replicaof 127.0.0.1 "$REDIS_MASTER"
	run_bg redis-replica-2 redis_node redis-replica-2 "$REDIS_REPLICA2" --replicaof 127.0.0.1 "$REDIS_MASTER"
	for i in 0 1 2; do
		port=${SENTINELS[$i]}
		cat >"$D/sentinel-$i.conf" <<CONF
port $port
bind 127.0.0.1
dir $D
sentinel monitor chat 127.0.0.1 $REDIS_MASTER 2
sentinel down-after-milliseconds chat 1000
sentinel failover-timeout chat 10000
CONF
		run_bg "sentinel-$i" redis-sentinel "$D/sentinel-$i.conf"
		wait_for 10 "sentinel $i" redis-cli -p "$port" ping
	done
}

patroni_config() { # patroni_config <index>
	local i=$1 name=pg$(($1 + 1))
	cat <<YAML
scope: chat
name: $name
restapi:
  listen: 127.0.0.1:${REST[$i]}
  connect_address: 127.0.0.1:${REST[$i]}
etcd3:
  hosts: 127.0.0.1:$ETCD
bootstrap:
  dcs:
    # Patroni's rule: loop_wait + 2 * retry_timeout <= ttl (docs/ha.md, "Timings"). The ttl is most of a
    # lost primary's gap: the standby is promoted when the leader key expires (docs/ha.md, "What happens
    # at a failover")
    ttl: 5
    loop_wait: 1
    retry_timeout: 2
    # a primary whose postgres crashed fails over to the synchronous standby at once (lossless with
    # synchronous_mode) instead of a crash recovery in place, which took 7-10 s (docs/ha.md, "Timings")
    master_start_timeout: 0
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${PG[$i]}
  connect_address: 127.0.0.1:${PG[$i]}
  data_dir: $D/$name
  bin_dir: $PG_BIN
  pgpass: $D/$name.pgpass
  authentication:
    replication:
      username: $PG_USER
    superuser:
      username: $PG_USER
  parameters:
    unix_socket_directories: '$D/sock'
    shared_preload_libraries: chat_outbox
    chat_outbox.database: chat
    chat_outbox.redis_url: '$REDIS_URL'
    chat_outbox.redis_min_replicas: 1
    # a standby whose primary is gone retries streaming every wal_retrieve_retry_interval and, when a
    # promotion arrives while its WAL receiver is starting, sleeps out the rest of that interval before
    # promoting: with the default 5 s the new primary took writes 4.9 s after Patroni promoted it
    # (docs/ha.md, "What happens at a failover")
    wal_retrieve_retry_interval: 250ms
YAML
}

# start_patroni_node <index>: Patroni for pg<index+1>; its pid lands in pids/patroni-<n>.real
start_patroni_node() {
	local n=$(($1 + 1))
	rm -f "$D/pids/patroni-$n.real"
	# sh execs patroni so the recorded pid is patroni's, whichever user runs it
	run_bg "patroni-$n" as_pg sh -c "echo \$\$ >'$D/pids/patroni-$n.real'; exec patroni '$D/pg$n.yml'"
}

start_patroni() {
	local i
	mkdir -p "$D/sock"
	[ "$(id -u)" != 0 ] || chown "$PG_USER" "$D" "$D/sock" "$D/log" "$D/pids"
	for i in 0 1; do
		patroni_config $i >"$D/pg$((i + 1)).yml"
		start_patroni_node $i
	done
	wait_for 60 "a Patroni leader" sh -c "curl -sf http://127.0.0.1:${REST[0]}/primary || curl -sf http://127.0.0.1:${REST[1]}/primary"
	for i in 1 2; do cp "$D/pids/patroni-$i.real" "$D/pids/patroni-$i.pid"; done
}

# HAProxy's timings (docs/ha.md, "Timings"): a server is checked every 500 ms and marked down after two
# failed checks, or at once when a connection to it fails (observe layer4, on-error mark-down). A
# Postgres server marked down has its sessions cut (shutdown-sessions), so a gateway on a Postgres that
# lost the lead reconnects to the new leader instead of waiting on it. A gateway marked down keeps its
# clients: /healthz says 503 while Redis or Postgres is away, which every gateway sees at once (they share
# them), and cutting their clients then only made each one reconnect, after its own backoff, once the
# gateways were back (docs/ha.md, "What happens at a failover"); a gateway that died has lost its
# connections anyway. Server state changes are logged with their time (log/haproxy.log).
haproxy_config() {
	cat <<CFG
global
  maxconn 4000
  stats socket $D/haproxy.sock mode 600 level admin
  log stderr format iso local0 notice
defaults
  log global
  timeout connect 1s
  timeout client 1h
  timeout server 1h
  timeout tunnel 1h
  # a connection refused by a server that just died is retried on another one, not on it again
  retries 2
  option redispatch 1
  default-server inter 500ms fastinter 250ms downinter 250ms fall 2 rise 1 observe layer4 error-limit 1 on-error mark-down
listen stats
  bind 127.0.0.1:$HAPROXY_STATS
  mode http
  stats enable
  stats uri /
# the Postgres primary: Patroni's REST API answers 200 on /primary only on the leader
listen postgres-primary
  bind 127.0.0.1:$PG_PRIMARY
  mode tcp
  option httpchk GET /primary
  http-check expect status 200
  server pg1 127.0.0.1:${PG[0]} check port ${REST[0]} on-marked-down shutdown-sessions
  server pg2 127.0.0.1:${PG[1]} check port ${REST[1]} on-marked-down shutdown-sessions
CFG
	local s svc ports front n
	for s in "${SERVICES[@]}"; do
		IFS=: read -r svc _ ports front <<<"$s"
		# Socket.IO's polling transport needs every request of a session on one gateway: balance by source
		printf 'listen gateway-%s\n  bind 127.0.0.1:%s\n  mode http\n  balance source\n  option httpchk GET /healthz\n' "$svc" "$front"
		n=0
		for p in ${ports//,/ }; do
			n=$((n + 1))
			printf '  server %s-%s 127.0.0.1:%s check\n' "$svc" "$n" "$p"
		done
	done
}

start_haproxy() {
	haproxy_config >"$D/haproxy.cfg"
	run_bg haproxy haproxy -db -f "$D/haproxy.cfg"
	wait_for 10 "HAProxy's stats socket" test -S "$D/haproxy.sock"
}

# haproxy_stat: `show stat` on the stats socket as CSV (no socat on a fresh machine: Python's socket)
haproxy_stat() {
	/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(2)
s.connect(sys.argv[1])
s.sendall(b"show stat\n")
out = b""
while chunk := s.recv(65536):
    out += chunk
sys.stdout.write(out.decode())' "$D/haproxy.sock"
}

# haproxy_up: every gateway UP, and one Postgres server (the leader) UP, as HAProxy routes now
haproxy_up() {
	haproxy_stat | awk -F, '
		$2 == "FRONTEND" || $2 == "BACKEND" || $1 ~ /^#/ || $1 == "stats" || NF < 18 { next }
		$1 == "postgres-primary" { if ($18 == "UP") pg++; next }
		{ gw++; if ($18 == "UP") up++ }
		END { exit !(pg == 1 && gw > 0 && up == gw) }'
}

create_database() {
	local url="postgresql://$PG_USER@127.0.0.1:$PG_PRIMARY"
	wait_for 30 "HAProxy to reach the primary" psql -XAtq "$url/postgres" -c "SELECT 1"
	psql -XAtq "$url/postgres" -c "SELECT 1 FROM pg_database WHERE datname = 'chat'" | grep 1 >/dev/null ||
		psql -XAtq "$url/postgres" -c "CREATE DATABASE chat"
	psql -XAtq "$url/chat" -c "CREATE EXTENSION IF NOT EXISTS chat_outbox"
}

# start_gateway <service> <queue> <n> <port>: gateway n of a service, once it answers /healthz.
# --lease-ttl 2000: the standby gateway takes the partition of a consumer that died within about 2.7 s
# (4/3 of the ttl), not 6.7 s (docs/ha.md, "Timings")
start_gateway() {
	run_bg "gateway-$1-$3" "$CHAT_OUTBOXD" --service "$1" --queue "$2" --identity "$1-$3" --lease-ttl 2000 \
		--listen "127.0.0.1:$4" --redis-url "$REDIS_URL" --database-url "$GATEWAY_DB_URL" --jwt-secret "$(cat "$D/jwt-secret")"
	wait_for 20 "gateway $1-$3" curl -sf "http://127.0.0.1:$4/healthz"
}

start_gateways() {
	local s svc queue ports n
	for s in "${SERVICES[@]}"; do
		IFS=: read -r svc queue ports _ <<<"$s"
		n=0
		for p in ${ports//,/ }; do
			n=$((n + 1))
			start_gateway "$svc" "$queue" "$n" "$p"
		done
	done
}

print_map() {
	local s svc queue ports front
	cat <<MAP
chat_outbox cluster in $D (logs in $D/log)
  etcd                 127.0.0.1:$ETCD
  Postgres (Patroni)   pg1 127.0.0.1:${PG[0]} (REST ${REST[0]}), pg2 127.0.0.1:${PG[1]} (REST ${REST[1]}); synchronous_mode on
                       primary via HAProxy (the gateways use it): $GATEWAY_DB_URL
                       patronictl -c $D/pg1.yml list
MAP
	if [ "$CLUSTER_REDIS" = sentinel ]; then
		cat <<MAP
  Redis                master 127.0.0.1:$REDIS_MASTER, replicas 127.0.0.1:$REDIS_REPLICA and 127.0.0.1:$REDIS_REPLICA2
                       sentinels: $SENTINEL_URL
MAP
	else
		cat <<MAP
  Redis Cluster        $REDIS_URL (3 masters, $CLUSTER_REDIS_REPLICAS replica(s) each)
                       redis-cli -p ${CLUSTER_NODES[0]} CLUSTER NODES
MAP
	fi
	for s in "${SERVICES[@]}"; do
		IFS=: read -r svc queue ports front <<<"$s"
		printf '  %-20s gateways %s (queue %s), through HAProxy: http://127.0.0.1:%s\n' "$svc" "${ports//,/ and }" "$queue" "$front"
	done
	cat <<MAP
  HAProxy stats        http://127.0.0.1:$HAPROXY_STATS/
  client tokens        HS256, secret in $D/jwt-secret
  stop with            scripts/cluster.sh stop
MAP
}

cmd_start() {
	if alive etcd; then
		echo "cluster: already running (scripts/cluster.sh status, or stop)" >&2
		exit 1
	fi
	command -v patroni etcd haproxy redis-sentinel redis-cli >/dev/null ||
		{ echo "cluster: needs patroni, etcd-server, haproxy and redis-sentinel (scripts/setup.sh installs them)" >&2; exit 1; }
	[ -x "$CHAT_OUTBOXD" ] || { echo "cluster: no $CHAT_OUTBOXD (build first)" >&2; exit 1; }
	rm -rf "$D"
	mkdir -p "$D/log" "$D/pids"
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$D/jwt-secret"
	printf 'CLUSTER_REDIS=%s\nCLUSTER_REDIS_REPLICAS=%s\nCLUSTER_NODE_TIMEOUT=%s\n' "$CLUSTER_REDIS" "$CLUSTER_REDIS_REPLICAS" \
		"$CLUSTER_NODE_TIMEOUT" >"$D/redis.settings"
	start_etcd
	start_redis
	start_patroni
	start_haproxy
	create_database
	start_gateways
	# /healthz answered is not yet routed: HAProxy marks a server up at its next check
	wait_for 30 "HAProxy to mark every gateway and the Postgres leader UP" haproxy_up
	print_map
}

cmd_stop() {
	local f name pid p nodes=()
	[ -d "$D/pids" ] || { echo "cluster: nothing recorded in $D"; return 0; }
	for p in "${CLUSTER_NODES[@]}"; do nodes+=("redis-$p"); done
	# gateways first (they finish their batches), the servers after, etcd last
	for name in gateway-consumers-1 gateway-consumers-2 gateway-workers-1 gateway-workers-2 haproxy \
		patroni-1 patroni-2 sentinel-0 sentinel-1 sentinel-2 redis-replica-2 redis-replica redis-master "${nodes[@]}" etcd; do
		f=$D/pids/$name.pid
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid"
			for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
			kill -0 "$pid" 2>/dev/null && { echo "cluster: $name ($pid) ignored SIGTERM for 30 s; SIGKILL"; kill -KILL "$pid"; }
		fi
		rm -f "$f"
		echo "stopped $name"
	done
}

# restart <part>: start one part again after it died (a failover test kills them), as `start` did.
# A Redis node starts without --replicaof: Sentinel makes it a replica of whichever node is the master; a
# Redis Cluster node (redis-<port>) starts on its nodes.conf and rejoins, as a replica if it lost its slots.
cmd_restart() {
	local name=${1:-} s svc queue ports n p
	[ -d "$D/pids" ] || { echo "cluster: not started ($D)" >&2; exit 1; }
	! alive "$name" || { echo "cluster: $name is running" >&2; exit 1; }
	case $name in
	redis-master) run_bg redis-master redis_node redis-master "$REDIS_MASTER" ;;
	redis-replica) run_bg redis-replica redis_node redis-replica "$REDIS_REPLICA" ;;
	redis-replica-2) run_bg redis-replica-2 redis_node redis-replica-2 "$REDIS_REPLICA2" ;;
	sentinel-[012]) run_bg "$name" redis-sentinel "$D/$name.conf" ;;
	redis-[0-9]*)
		[[ " ${CLUSTER_NODES[*]} " == *" ${name#redis-} "* ]] && [ "$CLUSTER_REDIS" = cluster ] ||
			{ echo "cluster: no Redis Cluster node $name" >&2; exit 2; }
		run_bg "$name" cluster_node "${name#redis-}"
		wait_for 10 "$name" redis-cli -p "${name#redis-}" ping
		;;
	haproxy)
		start_haproxy
		wait_for 30 "HAProxy to mark every gateway and the Postgres leader UP" haproxy_up
		;;
	patroni-1 | patroni-2)
		start_patroni_node $((${name#patroni-} - 1))
		wait_for 20 "$name to start" test -s "$D/pids/$name.real"
		cp "$D/pids/$name.real" "$D/pids/$name.pid"
		;;
	gateway-*)
		for s in "${SERVICES[@]}"; do
			IFS=: read -r svc queue ports _ <<<"$s"
			n=0
			for p in ${ports//,/ }; do
				n=$((n + 1))
				[ "$name" != "gateway-$svc-$n" ] || { start_gateway "$svc" "$queue" "$n" "$p"; return; }
			done
		done
		echo "cluster: no part $name" >&2
		exit 2
		;;
	*)
		echo "cluster: restart takes redis-master, redis-replica, redis-replica-2, sentinel-<0-2> (Sentinel), redis-<port> (Redis Cluster), patroni-1, patroni-2, haproxy or gateway-<service>-<n>" >&2
		exit 2
		;;
	esac
}

cmd_env() {
	local s svc queue ports front
	cat <<ENV
CLUSTER_DIR=$D
CLUSTER_PG_PORTS=${PG[0]},${PG[1]}
CLUSTER_PG_REST_PORTS=${REST[0]},${REST[1]}
CLUSTER_PG_PRIMARY_PORT=$PG_PRIMARY
CLUSTER_DATABASE_URL='$DB_URL'
CLUSTER_GATEWAY_DATABASE_URL='$GATEWAY_DB_URL'
CLUSTER_REDIS=$CLUSTER_REDIS
CLUSTER_REDIS_REPLICAS=$CLUSTER_REDIS_REPLICAS
CLUSTER_REDIS_PORTS=$(IFS=,; echo "${REDIS_PORTS[*]}")
CLUSTER_REDIS_URL='$REDIS_URL'
ENV
	[ "$CLUSTER_REDIS" != sentinel ] || cat <<ENV
CLUSTER_SENTINEL_PORTS=${SENTINELS[0]},${SENTINELS[1]},${SENTINELS[2]}
CLUSTER_SENTINEL_URL='$SENTINEL_URL'
ENV
	for s in "${SERVICES[@]}"; do
		IFS=: read -r svc queue ports front <<<"$s"
		printf 'CLUSTER_GATEWAYS_%s=%s\nCLUSTER_FRONT_%s=%s\n' "${svc^^}" "$ports" "${svc^^}" "$front"
	done
}

cmd_status() {
	local f name p
	[ -d "$D/pids" ] || { echo "cluster: not started ($D)"; return 0; }
	for f in "$D"/pids/*.pid; do
		[ -f "$f" ] || continue
		name=$(basename "$f" .pid)
		if alive "$name"; then echo "running  $name (pid $(cat "$f"))"; else echo "DEAD     $name"; fi
	done
	echo "-- Patroni"
	as_pg patronictl -c "$D/pg1.yml" list 2>/dev/null || echo "(patronictl did not answer)"
	if [ "$CLUSTER_REDIS" = sentinel ]; then
		echo "-- Sentinel: master of 'chat' is $(redis-cli -p "${SENTINELS[0]}" SENTINEL get-master-addr-by-name chat 2>/dev/null | paste -sd:)"
	else
		echo "-- Redis Cluster (CLUSTER NODES of the first node that answers)"
		for p in "${CLUSTER_NODES[@]}"; do
			redis-cli -p "$p" CLUSTER NODES 2>/dev/null | awk '{ print "  " $2 " " $3 " " $8 " " $9 " " $10 }' | grep . && break
		done || echo "(no node answered)"
	fi
	echo "-- HAProxy (server status)"
	haproxy_stat 2>/dev/null | awk -F, '$1 !~ /^#/ && $2 != "FRONTEND" && $2 != "BACKEND" && $1 != "stats" && NF > 18 { print "  " $1 "/" $2 " " $18 }' ||
		echo "(HAProxy's stats socket did not answer)"
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
restart) cmd_restart "${2:-}" ;;
haproxy-up) haproxy_up ;;
env) cmd_env ;;
*)
	echo "usage: scripts/cluster.sh start|stop|status|restart <part>|env|haproxy-up" >&2
	exit 2
	;;
esac
