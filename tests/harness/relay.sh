# tests/harness/relay.sh - the one way the shell suites start chat-outbox-relay (loaded by lib.sh).
#   relay_start <name> [flags...]  a relay in the background against $PGURL and $REDIS_URL, its
#                                  output appended to $H_DIR/relay-<name>.log; sets RELAY_PID
#                                  (stopped on exit)
#   relay_log_count <text>         lines of every relay log of this test containing <text>
#   relay_log_lines <text>         the same count wherever this test's relay logs: the relay
#                                  processes' logs in managed mode, postgres.log for the extension
#   relay_managed_env <test>       harness_init, Redis, and a managed Postgres (HARNESS_PG_MANAGED=1)
# With HARNESS_PG_MANAGED=1 and HARNESS_MANAGED_RELAY=1, harness_pg_start starts one relay itself,
# so a suite written for the extension runs unchanged in managed mode (tests/managed/in_managed_mode.sh).
# With HARNESS_MANAGED_WAKE=logical every relay is started with --wake logical (a flag overrides it).
CHAT_OUTBOX_RELAY=${CHAT_OUTBOX_RELAY:-${BUILD_DIR:-$H_ROOT/build}/relay/chat-outbox-relay}

relay_start() {
	CHAT_OUTBOX_RELAY_DATABASE_URL=$PGURL CHAT_OUTBOX_RELAY_REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379} \
		CHAT_OUTBOX_RELAY_WAKE=${HARNESS_MANAGED_WAKE:-notify} \
		"$CHAT_OUTBOX_RELAY" --relay-id "$1" "${@:2}" >>"$H_DIR/relay-$1.log" 2>&1 &
	RELAY_PID=$!
	harness_track "$RELAY_PID"
}

relay_log_count() { cat "$H_DIR"/relay-*.log | grep -c "$1" || true; }

relay_log_lines() {
	if [ "${HARNESS_MANAGED_RELAY:-0}" = 1 ]; then relay_log_count "$1"; else grep -c "$1" "$H_DIR/postgres.log" || true; fi
}

relay_managed_env() {
	harness_init "$1"
	harness_redis_start
	HARNESS_PG_MANAGED=1 harness_pg_start
	export REDIS_URL PGURL
}
