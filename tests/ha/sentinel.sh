# tests/ha/sentinel.sh - a Redis master, one replica and three sentinels on loopback, for the HA
# suites (sourced after tests/harness/lib.sh).
#   sentinel_env <name>    harness_init, the master ($REDIS_PORT, $REDIS_PIDFILE as for
#                          harness_redis_start), a replica ($REPLICA_PORT, $REPLICA_PIDFILE; with
#                          HA_REPLICAS=n, n replicas, all in $REPLICA_PORTS), three sentinels watching
#                          master "mymaster" ($SENTINEL_PORTS; each a $HARNESS_REDIS_SERVER in sentinel
#                          mode), and $REDIS_URL = the redis-sentinel:// URL naming them. Node <port>
#                          keeps its data and pidfile in $H_DIR/redis-<port>.
#   sentinel_master_port   the port the sentinels name as master now
#   redis_start_node <port> <dir> [args...]  one $HARNESS_REDIS_SERVER in the background, tracked for cleanup
# With SENTINEL_TLS=1 every node and sentinel serves TLS only (port 0, tls-port, tls-replication yes)
# with a certificate of the test's own CA (tests/harness/tls_ca.sh, in $SENTINEL_TLS_DIR), redis-cli
# speaks TLS to them ($SCLI, and rcli) and $REDIS_URL is the rediss-sentinel:// form with cacert=.
# Sentinels decide within a few seconds (down-after-milliseconds 3000, or
# $SENTINEL_DOWN_AFTER_MS: bench/ha uses 1000) so a failover fits a test. Not
# less: at 1000 a new master busy for a second on a loaded CI machine looked down too, and a second
# failover promoted the restarted old master before it had synced from the new one, losing the test's
# own writes there (its resume of the queue: Redis replication is asynchronous for writes without WAIT).

# sentinel_tls_args: a node's TLS arguments (none without SENTINEL_TLS_DIR); SCLI: redis-cli for the nodes
sentinel_tls_args() {
	[ -z "${SENTINEL_TLS_DIR:-}" ] || echo "--port 0 --tls-port $1 --tls-cert-file $SENTINEL_TLS_DIR/server.crt" \
		"--tls-key-file $SENTINEL_TLS_DIR/server.key --tls-ca-cert-file $SENTINEL_TLS_DIR/ca.crt" \
		"--tls-replication yes --tls-auth-clients no"
}
SCLI=redis-cli

redis_start_node() {
	local port=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	# shellcheck disable=SC2046 # the TLS arguments are words
	"$HARNESS_REDIS_SERVER" --port "$port" $(sentinel_tls_args "$port") --bind 127.0.0.1 --dir "$dir" --appendonly yes --appendfsync everysec \
		--maxmemory-policy noeviction --save '' --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" "$@" &
	harness_track $!
	harness_wait_for 10 $SCLI -p "$port" ping
}

sentinel_master_port() {
	$SCLI -p "${SENTINEL_PORTS%% *}" SENTINEL get-master-addr-by-name mymaster | sed -n 2p
}

sentinel_env() {
	harness_init "$1"
	if [ "${SENTINEL_TLS:-0}" = 1 ]; then
		. "$H_ROOT/tests/harness/tls_ca.sh"
		tls_ca ca
		tls_cert ca server "DNS:localhost,IP:127.0.0.1" # the sentinels name the master by its IP
		chmod -R a+rX "$TLS_DIR"
		SENTINEL_TLS_DIR=$TLS_DIR
		SCLI="redis-cli --tls --cacert $TLS_DIR/ca.crt"
		REDIS_CLI_AUTH="--tls --cacert $TLS_DIR/ca.crt"
	fi
	local replicas=${HA_REPLICAS:-1} port
	REDIS_PORT=$(harness_free_port)
	REDIS_DIR=$H_DIR/redis-$REDIS_PORT
	redis_start_node "$REDIS_PORT" "$REDIS_DIR"
	REDIS_PIDFILE=$REDIS_DIR/redis.pid
	REPLICA_PORTS=""
	for ((r = 0; r < replicas; r++)); do
		port=$(harness_free_port)
		redis_start_node "$port" "$H_DIR/redis-$port" --replicaof 127.0.0.1 "$REDIS_PORT"
		REPLICA_PORTS="$REPLICA_PORTS${REPLICA_PORTS:+ }$port"
	done
	REPLICA_PORT=${REPLICA_PORTS%% *}
	REPLICA_PIDFILE=$H_DIR/redis-$REPLICA_PORT/redis.pid
	harness_wait_for 10 sh -c "$SCLI -p $REDIS_PORT INFO replication | grep -q '^connected_slaves:$replicas'"
	SENTINEL_PORTS=""
	local hosts="" conf
	for i in 1 2 3; do
		port=$(harness_free_port)
		conf=$H_DIR/sentinel-$i.conf # sentinels rewrite their config: one writable file each
		cat >"$conf" <<CONF
port $port
bind 127.0.0.1
dir $H_DIR
logfile $H_DIR/sentinel-$i.log
sentinel monitor mymaster 127.0.0.1 $REDIS_PORT 2
sentinel down-after-milliseconds mymaster ${SENTINEL_DOWN_AFTER_MS:-3000}
sentinel failover-timeout mymaster 10000
sentinel parallel-syncs mymaster 1
CONF
		[ -z "${SENTINEL_TLS_DIR:-}" ] || printf '%s\n' "port 0" "tls-port $port" "tls-cert-file $SENTINEL_TLS_DIR/server.crt" \
			"tls-key-file $SENTINEL_TLS_DIR/server.key" "tls-ca-cert-file $SENTINEL_TLS_DIR/ca.crt" \
			"tls-replication yes" "tls-auth-clients no" >>"$conf"
		"$HARNESS_REDIS_SERVER" "$conf" --sentinel & # a server in sentinel mode: Valkey's own under tests/valkey/on_valkey.sh
		harness_track $!
		harness_wait_for 10 $SCLI -p "$port" ping
		SENTINEL_PORTS="$SENTINEL_PORTS${SENTINEL_PORTS:+ }$port"
		hosts="$hosts${hosts:+,}127.0.0.1:$port"
	done
	# every sentinel has found the replica and the other sentinels before anything is decided
	for port in $SENTINEL_PORTS; do
		harness_wait_value 20 = "$replicas" sh -c "$SCLI -p $port SENTINEL replicas mymaster | grep -c '^name\$' || true"
		harness_wait_value 20 = 2 sh -c "$SCLI -p $port SENTINEL sentinels mymaster | grep -c '^runid\$' || true"
	done
	REDIS_URL="redis-sentinel://$hosts/mymaster"
	[ -z "${SENTINEL_TLS_DIR:-}" ] || REDIS_URL="rediss-sentinel://$hosts/mymaster?cacert=$SENTINEL_TLS_DIR/ca.crt"
	export REDIS_PORT REDIS_PIDFILE REPLICA_PORT REPLICA_PORTS REPLICA_PIDFILE REDIS_DIR SENTINEL_PORTS REDIS_URL
}
