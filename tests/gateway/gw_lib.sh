# tests/gateway/gw_lib.sh - start PostgreSQL, Redis and one chat-outboxd for a gateway test.
#   gw_start_all <name>   harness + PG + Redis + daemon (service workers, queue chat-messages)
#   gw_start_daemon       (re)start the daemon on $GW_PORT; gw_stop_daemon sends SIGTERM and waits
# Exports GW_PORT, GW_SECRET, PGURL for the .mjs peers.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

GW_SECRET=${GW_SECRET:-gateway-test-secret-of-32-bytes-or-more}
NODE_PATH=$H_ROOT/tests/node_modules
export GW_SECRET NODE_PATH

gw_start_daemon() {
	"$CHAT_OUTBOXD" --service workers --queue chat-messages --listen "127.0.0.1:$GW_PORT" \
		--jwt-secret "$GW_SECRET" --database-url "$PGURL" --redis-url "$REDIS_URL" \
		--ping-interval "${GW_PING_INTERVAL:-300}" --ping-timeout "${GW_PING_TIMEOUT:-300}" \
		--log-level verbose ${GW_EXTRA_ARGS:-} >>"$H_DIR/daemon.log" 2>&1 &
	GW_PID=$!
	harness_track "$GW_PID"
	harness_wait_for 20 curl -sf "http://127.0.0.1:$GW_PORT/healthz"
}

gw_stop_daemon() {
	kill -TERM "$GW_PID"
	local i
	for i in $(seq 1 100); do
		kill -0 "$GW_PID" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "daemon did not stop within 10 s of SIGTERM" >&2
	return 1
}

gw_start_all() {
	harness_init "$1"
	harness_redis_start
	harness_pg_start
	GW_PORT=$(harness_free_port)
	export GW_PORT PGURL
	gw_start_daemon
}
