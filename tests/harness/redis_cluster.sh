# tests/harness/redis_cluster.sh - a Redis Cluster on loopback for the cluster suites (loaded by lib.sh).
#   cluster_start [masters]   2 x masters nodes of $HARNESS_REDIS_SERVER (default 3 masters, one
#                             replica each), cluster-enabled, appendonly yes, cluster-node-timeout
#                             $CLUSTER_NODE_TIMEOUT (2000 ms), made into one cluster by
#                             `redis-cli --cluster create --cluster-replicas 1`; waits until every
#                             node says cluster_state:ok and every replica has synced (link up). Sets $CLUSTER_PORTS (every node) and
#                             $CLUSTER_URL (redis-cluster:// naming every node as a seed).
#                             With CLUSTER_TLS=<certificate name> (tests/harness/tls_ca.sh: tls_ca ca and
#                             tls_cert ca <name> ..., sourced first) every node speaks only TLS: no
#                             plaintext port, the cluster bus and replication over TLS too, that
#                             certificate of CA "ca"; $CLUSTER_URL is then rediss-cluster://...?cacert=
#                             and ccli speaks TLS; $CLUSTER_CACERT (exported) names the CA's
#                             certificate for the Node peers (tests/harness/redis_cluster.mjs).
#   cluster_tls_start <SANs>  the TLS suites' cluster: CAs "ca" and "other", a node certificate "node" of ca
#                             with those subject alternative names, cluster_start with CLUSTER_TLS=node; sets
#                             $SEED (the first node), $GOOD and $WRONG (rediss-cluster:// naming that seed only,
#                             with ca's and other's certificate as cacert)
#   cluster_node_certs <name> every node of a TLS cluster serves certificate <name> (of $TLS_DIR) to new
#                             connections from now on (CONFIG SET; the cluster bus and replication links
#                             made before stay up), asked with redis-cli --insecure (the nodes' certificate
#                             may be one that fails verification)
#   cluster_node_cert <port> <name>  the same on one node only
#   cluster_master_of <key>   the port of the master serving <key>'s hash slot (CLUSTER KEYSLOT, CLUSTER NODES)
#   cluster_other_master <key...>  the first master other than $SEED serving one of those keys ("" if none)
#   cluster_clients_cut       every node drops its clients' connections (CLIENT KILL TYPE normal and pubsub:
#                             not the cluster bus, not replication); they connect anew, as after a network blip
#   tls_plain_redis           a plaintext redis-server on $PLAIN_PORT (daemonized, $H_DIR/plain.pid), for a
#                             URL that says TLS where none is spoken
#   cluster_node_start <port> (again, on its data: a killed node rejoins, as a replica after a failover)
#   cluster_node_cmd <port>   its command line; cluster_start exports it as $CLUSTER_NODE_START_<port>
#                             for test peers, which start a killed node again themselves
#   cluster_masters           the ports of the masters now, one a line
#   cluster_kill <port>       SIGKILL that node (what a crash looks like)
#   cluster_wait_ok           until every running node says cluster_state:ok and names 3 masters
#   ccli <port> <args...>     redis-cli against one node
#   cluster_relay_followed <log>  after tests/cluster/relay.mjs (the relay's log in <log>): fails when the
#                             relay logged no MOVED to the reshard's target
#   cluster_daemons_followed <log>  after tests/cluster/daemon.mjs (its daemons' output in <log>): prints
#                             what their cluster links logged of the failover, fails on a CROSSSLOT error
#                             or when no daemon followed a MOVED to the reshard's target
# The nodes run in the foreground below the test (tracked: stopped on exit). Each node keeps its data, nodes.conf and pid file in $H_DIR/node-<port>; its cluster bus listens on a
# port of its own from harness_free_port (not port + 10000, which may be outside the tests' range).
CLUSTER_NODE_TIMEOUT=${CLUSTER_NODE_TIMEOUT:-2000}
declare -A CLUSTER_BUS

CLUSTER_TLS=${CLUSTER_TLS:-}
cluster_cli_tls() { [ -z "$CLUSTER_TLS" ] || echo "--tls --cacert $TLS_DIR/ca.crt"; }
# shellcheck disable=SC2046
ccli() { redis-cli $(cluster_cli_tls) -p "$1" "${@:2}"; }

# cluster_node_listen <port>: where a node listens (a TLS-only node: --port 0, its TLS port, bus and replication TLS)
cluster_node_listen() {
	if [ -z "$CLUSTER_TLS" ]; then
		echo "--port $1"
		return
	fi
	echo "--port 0 --tls-port $1 --tls-cluster yes --tls-replication yes --tls-cert-file $TLS_DIR/$CLUSTER_TLS.crt" \
		"--tls-key-file $TLS_DIR/$CLUSTER_TLS.key --tls-ca-cert-file $TLS_DIR/ca.crt --tls-auth-clients optional"
}

cluster_node_cmd() { # the command line that runs node <port> in the foreground (also for test peers)
	local port=$1 dir=$H_DIR/node-$1
	echo "$HARNESS_REDIS_SERVER $(cluster_node_listen "$port") --bind 127.0.0.1 --dir $dir --cluster-enabled yes" \
		"--cluster-port ${CLUSTER_BUS[$port]} --cluster-config-file $dir/nodes.conf" \
		"--cluster-node-timeout $CLUSTER_NODE_TIMEOUT --appendonly yes --appendfsync everysec --save ''" \
		"--maxmemory-policy noeviction --repl-diskless-sync-delay 0 --pidfile $dir/redis.pid --logfile $dir/redis.log"
}

cluster_node_start() {
	mkdir -p "$H_DIR/node-$1"
	eval "$(cluster_node_cmd "$1")" >/dev/null &
	harness_track $!
	harness_wait_for 10 ccli "$1" ping
}

cluster_kill() {
	kill -9 "$(cat "$H_DIR/node-$1/redis.pid")"
	harness_wait_for 10 sh -c "! redis-cli $(cluster_cli_tls) -p $1 ping >/dev/null 2>&1"
}

cluster_masters() {
	local p
	for p in $CLUSTER_PORTS; do
		ccli "$p" ping >/dev/null 2>&1 || continue
		ccli "$p" CLUSTER NODES | awk '$3 ~ /master/ && $3 !~ /fail/ && NF > 8 { split($2, a, "[:@]"); print a[2] }' | sort -u
		return 0
	done
}

cluster_ok() {
	local p n=0
	for p in $CLUSTER_PORTS; do
		ccli "$p" ping >/dev/null 2>&1 || continue
		ccli "$p" CLUSTER INFO | grep '^cluster_state:ok' >/dev/null || return 1
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] && [ "$(cluster_masters | wc -l)" = "${CLUSTER_MASTERS:-3}" ]
}

cluster_wait_ok() { harness_wait_for "${1:-30}" cluster_ok; }

# cluster_replicas_up: every replica has its master's data and its link up. A replica whose first sync
# failed (a PSYNC that timed out while the cluster was still being made) is not allowed to fail over:
# a suite that kills a master before its replica synced would wait for a failover that never comes.
cluster_replicas_up() {
	local p info
	for p in $CLUSTER_PORTS; do
		info=$(ccli "$p" INFO replication) || return 1
		grep -q '^role:slave' <<<"$info" || continue
		grep -q '^master_link_status:up' <<<"$info" || return 1
	done
}

cluster_tls_start() {
	tls_ca ca
	tls_ca other
	tls_cert ca node "$1"
	chmod -R a+rX "$TLS_DIR"
	CLUSTER_TLS=node
	cluster_start
	SEED=${CLUSTER_PORTS%% *}
	GOOD="rediss-cluster://127.0.0.1:$SEED?cacert=$TLS_DIR/ca.crt"
	WRONG="rediss-cluster://127.0.0.1:$SEED?cacert=$TLS_DIR/other.crt"
}

cluster_start() {
	CLUSTER_MASTERS=${1:-3}
	CLUSTER_PORTS=""
	local i port hosts="" seeds=""
	for ((i = 0; i < 2 * CLUSTER_MASTERS; i++)); do
		port=$(harness_free_port)
		CLUSTER_BUS[$port]=$(harness_free_port)
		cluster_node_start "$port"
		CLUSTER_PORTS="$CLUSTER_PORTS${CLUSTER_PORTS:+ }$port"
		hosts="$hosts 127.0.0.1:$port"
		seeds="$seeds${seeds:+,}127.0.0.1:$port"
	done
	# shellcheck disable=SC2086 # one argument per node
	"$HARNESS_REDIS_CLI" $(cluster_cli_tls) --cluster create $hosts --cluster-replicas 1 --cluster-yes >"$H_DIR/cluster-create.log" 2>&1 ||
		{ cat "$H_DIR/cluster-create.log" >&2; return 1; }
	cluster_wait_ok 30
	harness_wait_for 30 cluster_replicas_up
	CLUSTER_URL="redis-cluster://$seeds"
	CLUSTER_CACERT=""
	[ -z "$CLUSTER_TLS" ] || CLUSTER_CACERT=$TLS_DIR/ca.crt CLUSTER_URL="rediss-cluster://$seeds?cacert=$TLS_DIR/ca.crt"
	export CLUSTER_PORTS CLUSTER_URL CLUSTER_MASTERS CLUSTER_CACERT
	for port in $CLUSTER_PORTS; do
		export "CLUSTER_NODE_START_$port=$(cluster_node_cmd "$port")"
	done
}

cluster_daemons_followed() {
	local log=$1 crossslot moved
	# what the daemons' cluster links logged of the failover: the masters after it, and the home slots that moved
	grep -h "home slot\|masters .*, were" "$log" | sed 's/^[^ ]* [^ ]* [^ ]* [^ ]* //' | sort -u
	crossslot=$(grep -c "CROSSSLOT" "$log" || true)
	[ "$crossslot" = 0 ] || fail "the daemons logged $crossslot CROSSSLOT error(s): a script's keys in several slots"
	# the daemons followed the reshard: a command on the moved partition got MOVED and went to the new master
	moved=$(grep -c "moved to 127.0.0.1:$(cat "$H_DIR/reshard-target")" "$log" || true)
	[ "$moved" -ge 1 ] || fail "the daemons logged no MOVED to the reshard's target"
	echo "the daemons followed MOVED to the reshard's target $moved time(s), ASK $(grep -c ": ASK to " "$log" || true) time(s)"
}

cluster_node_certs() {
	local p
	for p in $CLUSTER_PORTS; do cluster_node_cert "$p" "$1"; done
}

cluster_node_cert() {
	redis-cli --tls --insecure -p "$1" CONFIG SET tls-cert-file "$TLS_DIR/$2.crt" tls-key-file "$TLS_DIR/$2.key" >/dev/null
}

cluster_master_of() {
	local p slot
	for p in $CLUSTER_PORTS; do
		slot=$(ccli "$p" CLUSTER KEYSLOT "$1" 2>/dev/null) || continue
		ccli "$p" CLUSTER NODES | awk -v s="$slot" '$3 ~ /master/ && $3 !~ /fail/ {
			for (i = 9; i <= NF; i++) { n = split($i, r, "-"); if (s >= r[1] && s <= r[n]) { split($2, a, "[:@]"); print a[2] } } }'
		return 0
	done
	return 1
}

cluster_other_master() {
	local k m
	for k in "$@"; do
		m=$(cluster_master_of "$k")
		[ "$m" = "$SEED" ] || { echo "$m"; return 0; }
	done
}

cluster_clients_cut() {
	local p t
	for p in $CLUSTER_PORTS; do
		for t in normal pubsub; do redis-cli $(cluster_cli_tls) --insecure -p "$p" CLIENT KILL TYPE $t >/dev/null; done
	done
}

tls_plain_redis() {
	PLAIN_PORT=$(harness_free_port)
	"$HARNESS_REDIS_SERVER" --port "$PLAIN_PORT" --bind 127.0.0.1 --save '' --daemonize yes --dir "$H_DIR" \
		--pidfile "$H_DIR/plain.pid" --logfile "$H_DIR/plain.log"
	harness_wait_for 10 redis-cli -p "$PLAIN_PORT" ping
}

cluster_relay_followed() {
	local moved
	# the relay followed the reshard: its next batch to the moved partition got MOVED and went to the new master
	moved=$(grep -c "moved to 127.0.0.1:$(cat "$H_DIR/reshard-target")" "$1" || true)
	[ "$moved" -ge 1 ] || fail "the relay logged no MOVED to the reshard's target"
}
