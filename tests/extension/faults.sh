#!/usr/bin/env bash
# tests/extension/faults.sh - nothing is lost when Redis or Postgres fail under the relay.
#   1. Redis stopped for 5 s while messages are sent: rows wait in the outbox, one log line per
#      change of state, everything arrives after Redis returns.
#   2. The relay worker SIGKILLed (crash recovery of the whole cluster), then pg_ctl restart,
#      both mid-stream: everything stored is processed, exactly once.
#   3. A configuration reload (SIGHUP) while a batch waits for Redis's answer (CLIENT PAUSE WRITE,
#      lifted right after the reload): the relay waits for the answer and commits, on the same Redis
#      connection (dropping it would roll the pass back and send its rows again).
#   4. Redis hung (SIGSTOP) with a 60 s redis_timeout: a SIGHUP (pausing the relay) and then a
#      fast shutdown are still answered within seconds.
# A real bullmq Worker (consume.mjs) records every processed job id; the checks compare that
# with what Postgres stored.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-faults
harness_redis_start
harness_pg_start
export REDIS_URL PGURL
HERE=$H_ROOT/tests/extension
PROCESSED=$H_DIR/processed.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"

. "$HERE/delivery.sh"
log_count() { grep -c "$1" "$H_DIR/postgres.log" || true; }

node "$HERE/consume.mjs" "$PROCESSED" >"$H_DIR/consumer.log" 2>&1 &
harness_track $!

# 1. Redis outage while sending
sender_start outage 10
harness_wait_for 20 sender_acked_at_least 50
harness_redis_stop
harness_wait_value 20 = 'backing off' relay_status relay_state
sleep 5 # the outage the scenario asks for; sends continue meanwhile
unsent=$(relay_status unsent)
[ "$unsent" -gt 0 ] || fail "outage: no rows waited in the outbox"
echo "ok   outage: $unsent rows waiting in the outbox, relay backing off"
harness_redis_start_again
at=$(sender_acked)
harness_wait_for 20 sender_acked_at_least $((at + 30))
sender_stop
verify_delivered "redis outage"
# logged once per cause, never a line per retry: Redis stopped refuses connections; a relay that comes
# back while the restarted Redis still loads its data also meets LOADING, a cause of its own (whether it
# does is the machine's timing), logged once after it
causes=$(grep -o 'redis unreachable: .*' "$H_DIR/postgres.log" | sed 's/.*: //' | paste -sd'|')
[[ "$causes" == "Connection refused" || "$causes" == "Connection refused|LOADING Redis is loading the dataset in memory" ]] ||
	fail "outage logged as: $causes (want Connection refused once, then at most LOADING once)"
harness_wait_for 10 grep -q 'redis back, relayed' "$H_DIR/postgres.log"
echo "ok   outage logged once per cause: $(grep -o 'redis unreachable.*' "$H_DIR/postgres.log" | head -1) / $(grep -o 'redis back, relayed.*' "$H_DIR/postgres.log")"

# 2. relay SIGKILLed, then Postgres restarted, mid-stream
sender_start crash 10
harness_wait_for 20 sender_acked_at_least 80
relay_pid=$(harness_psql "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'")
kill -9 "$relay_pid"
harness_wait_for 30 sender_acked_at_least 160
harness_pg_ctl restart -m fast -w >/dev/null
at=$(sender_acked)
harness_wait_for 30 sender_acked_at_least $((at + 30)) # the sender rides out the restart
sender_stop
verify_delivered "relay SIGKILL + pg_ctl restart"
new_pid=$(harness_psql "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'")
[ -n "$new_pid" ] && [ "$new_pid" != "$relay_pid" ] || fail "relay not restarted"

# relay_waits_on_redis [in-pass]: the worker on the Extension wait event (the Redis socket, or its idle
# wait between passes); with in-pass, only inside a pass (state active), so on Redis
relay_waits_on_redis() {
	psql -XAtq "$PGURL" -c "SELECT 1 FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'
		AND wait_event = 'Extension'${1:+ AND state = 'active'}" | grep 1 >/dev/null
}
# relay_redis_port: the local port of the relay worker's connection to Redis (one shard)
relay_redis_port() {
	redis_conns_of "$(relay_status worker_pid)" | sed 's/.*://'
}

# 3. a reload while a batch waits for Redis's answer
harness_psql "SELECT consumers.send_message(1, 'before a reload')" >/dev/null
harness_wait_value 20 = 0 relay_status unsent
port=$(relay_redis_port)
[ -n "$port" ] || fail "no Redis connection of the relay found"
rcli client pause 60000 write >/dev/null
harness_psql "SELECT consumers.send_message(1, 'during a reload')" >/dev/null
harness_wait_for 10 relay_waits_on_redis in-pass
harness_psql "SELECT pg_reload_conf()" >/dev/null
rcli client unpause >/dev/null
harness_wait_value 20 = 0 relay_status unsent
expect_eq "a reload while a batch waited for Redis: the relay's Redis connection (local port) kept" "$port" "$(relay_redis_port)"

# 4. SIGHUP and SIGTERM are answered while Redis hangs
harness_psql "ALTER SYSTEM SET chat_outbox.redis_timeout = '60s'" && harness_psql "SELECT pg_reload_conf()" >/dev/null
kill -STOP "$(cat "$REDIS_PIDFILE")"
harness_psql "SELECT consumers.send_message(1, 'while redis hangs')" >/dev/null
harness_wait_for 10 relay_waits_on_redis
harness_psql "ALTER SYSTEM SET chat_outbox.relay_enabled = off" && harness_psql "SELECT pg_reload_conf()" >/dev/null
harness_wait_value 10 = paused relay_status relay_state ||
	fail "SIGHUP not answered while Redis hangs"
echo "ok   SIGHUP answered while Redis was hung (relay paused)"
harness_psql "ALTER SYSTEM SET chat_outbox.relay_enabled = on" && harness_psql "SELECT pg_reload_conf()" >/dev/null
harness_wait_for 10 relay_waits_on_redis
if ! timeout 10 bash -c ". '$H_ROOT/tests/harness/lib.sh'; PG_DATA='$PG_DATA' H_DIR='$H_DIR' harness_pg_ctl stop -m fast -w" >/dev/null; then
	fail "shutdown blocked while Redis hangs"
fi
kill -CONT "$(cat "$REDIS_PIDFILE")"
echo "ok   fast shutdown completed while Redis was hung"
