# tests/managed/relay_harness.sh - start and stop chat-outbox-relay processes (sourced by suites).
#   relay_start <name>     a relay in the background against $PGURL and $REDIS_URL, its output in
#                          $H_DIR/relay-<name>.log; sets RELAY_PID (stopped on exit)
#   relay_log_count <text> lines of every relay log containing <text>
#   relay_managed_env <test>  harness_init, Redis, and a managed Postgres (HARNESS_PG_MANAGED=1)
CHAT_OUTBOX_RELAY=${CHAT_OUTBOX_RELAY:-${BUILD_DIR:-$H_ROOT/build}/relay/chat-outbox-relay}

relay_start() {
	CHAT_OUTBOX_RELAY_DATABASE_URL=$PGURL CHAT_OUTBOX_RELAY_REDIS_URL=$REDIS_URL \
		"$CHAT_OUTBOX_RELAY" --relay-id "$1" "${@:2}" >>"$H_DIR/relay-$1.log" 2>&1 &
	RELAY_PID=$!
	harness_track "$RELAY_PID"
}

relay_log_count() { cat "$H_DIR"/relay-*.log | grep -c "$1" || true; }

relay_managed_env() {
	harness_init "$1"
	harness_redis_start
	HARNESS_PG_MANAGED=1 harness_pg_start
	export REDIS_URL PGURL
}
