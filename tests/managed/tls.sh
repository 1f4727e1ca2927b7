#!/usr/bin/env bash
# tests/managed/tls.sh - the processes over TLS both ways, certificates of the test's own CA:
# chat-outbox-relay and chat-outboxd reach Redis by rediss:// (a redis-server with only a TLS port)
# and Postgres by libpq's sslmode=verify-full (a server certificate of the same CA, ssl = on).
#   1. send_message -> chat-outbox-relay -> chat-messages -> chat-outboxd -> workers.inbox: every
#      message once, in send order per chat; every connection of the processes to Postgres is SSL.
#   2. A wrong CA for each process (restarted with it): rows wait, the error shows in the relay's
#      status (chat_outbox.status) and in each log, logged once, not per retry; a restart with the
#      right CA and everything flows, once, in order.
#   3. insecure=1: works, one warning at start.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/sent_once.sh"
. "$(dirname "$0")/../harness/tls_ca.sh"
harness_init managed-tls
tls_ca ca
tls_ca other
tls_cert ca server "DNS:localhost"
tls_cert ca pg "DNS:localhost,IP:127.0.0.1"
chmod -R a+rX "$TLS_DIR"
chmod 600 "$TLS_DIR/pg.key"
[ "$(id -u)" != 0 ] || chown "$PG_USER" "$TLS_DIR/pg.key"
REDIS_PORT=$(harness_free_port)
REDIS_EXTRA_ARGS=$(tls_redis_args server)
REDIS_CLI_AUTH="--tls --cacert $TLS_DIR/ca.crt"
GOOD="rediss://localhost:$REDIS_PORT?cacert=$TLS_DIR/ca.crt"
WRONG="rediss://localhost:$REDIS_PORT?cacert=$TLS_DIR/other.crt"
REDIS_URL=$GOOD
harness_redis_start "$REDIS_PORT"
HARNESS_PG_MANAGED=1 harness_pg_start "" "ssl = on" "ssl_cert_file = '$TLS_DIR/pg.crt'" "ssl_key_file = '$TLS_DIR/pg.key'"
export REDIS_URL PGURL
PG_TLS="$PGURL?sslmode=verify-full&sslrootcert=$TLS_DIR/ca.crt"
daemon_export_settings
CHAT_OUTBOXD_DATABASE_URL=$PG_TLS


# 1. both processes over TLS, both ways
PGURL=$PG_TLS relay_start one
daemon_start workers.log --service workers --queue chat-messages
WORKERS_PID=$DAEMON_PID
daemon_wait_consuming workers.log
sent_once_send 30
sent_once_verify "over TLS"
expect_eq "the processes' Postgres connections without SSL" 0 "$(psql -XAtq "$PG_SUPER_URL" -c "
	SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
	WHERE a.client_addr IS NOT NULL AND a.application_name <> 'psql' AND NOT s.ssl")"
expect_eq "the relay's connection is SSL" 1 "$(psql -XAtq "$PG_SUPER_URL" -c "
	SELECT count(*) > 0 FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
	WHERE a.application_name = 'chat-outbox-relay' AND s.ssl" | sed 's/t/1/')"
echo "ok   chat-outbox-relay and chat-outboxd over rediss:// and sslmode=verify-full: $sent messages once, in order"

# 2a. the relay with a wrong CA: rows wait, its status and log say why (once); the right CA flows
harness_stop_pid "$RELAY_PID"
REDIS_URL=$WRONG PGURL=$PG_TLS relay_start two
sent_once_send 5
error_has() { relay_status last_error | grep -E "$1" >/dev/null; }
harness_wait_for 30 error_has "certificate verify failed: self-signed certificate in certificate chain"
harness_wait_for 10 relay_unsent_is 5
log_steady "$H_DIR/relay-two.log" "certificate verify failed"
echo "ok   relay, wrong CA: rows wait, status: $(relay_status last_error)"
harness_stop_pid "$RELAY_PID"
PGURL=$PG_TLS relay_start three
harness_wait_for 30 relay_unsent_is 0
sent_once_verify "relay restarted with the right CA"

# 2b. the daemon with a wrong CA: jobs wait in Redis, its log says why (once); the right CA flows
harness_stop_pid "$WORKERS_PID"
CHAT_OUTBOXD_REDIS_URL=$WRONG daemon_start workers-wrong.log --service workers --queue chat-messages
WRONG_PID=$DAEMON_PID
sent_once_send 5
harness_wait_for 30 relay_unsent_is 0 # the relay put them in Redis
harness_wait_for 30 grep -q "certificate verify failed" "$H_DIR/workers-wrong.log"
log_steady "$H_DIR/workers-wrong.log" "certificate verify failed"
expect_eq "inbox while the daemon cannot reach Redis" $((sent - 5)) "$(inbox_count workers)"
echo "ok   daemon, wrong CA: $(grep -m1 "certificate verify failed" "$H_DIR/workers-wrong.log" | cut -c1-200)"
harness_stop_pid "$WRONG_PID"
daemon_start workers.log --service workers --queue chat-messages
sent_once_verify "daemon restarted with the right CA"

# 2c. a plaintext Redis behind rediss://: it never answers the handshake (it reads the ClientHello as an
# unfinished command), so each process's log names the likely cause, once, not only "timed out"
PLAIN_PORT=$(harness_free_port)
redis-server --port "$PLAIN_PORT" --bind 127.0.0.1 --save '' --daemonize yes --dir "$H_DIR" \
	--pidfile "$H_DIR/plain.pid" --logfile "$H_DIR/plain.log"
harness_wait_for 10 redis-cli -p "$PLAIN_PORT" ping
PLAIN="rediss://localhost:$PLAIN_PORT?cacert=$TLS_DIR/ca.crt"
CHAT_OUTBOXD_REDIS_URL=$PLAIN daemon_start workers-plain.log --service workers --queue chat-messages
PLAIN_DAEMON_PID=$DAEMON_PID
harness_wait_for 30 grep -q "speak TLS on this port" "$H_DIR/workers-plain.log"
log_steady "$H_DIR/workers-plain.log" "speak TLS on this port"
echo "ok   daemon, plaintext Redis behind rediss://: $(grep -m1 "speak TLS on this port" "$H_DIR/workers-plain.log" | cut -c1-200)"
harness_stop_pid "$PLAIN_DAEMON_PID"
harness_stop_pid "$RELAY_PID"
REDIS_URL=$PLAIN PGURL=$PG_TLS relay_start plain
sent_once_send 3
harness_wait_for 30 grep -q "speak TLS on this port" "$H_DIR/relay-plain.log"
log_steady "$H_DIR/relay-plain.log" "speak TLS on this port"
echo "ok   relay, plaintext Redis behind rediss://: $(grep -m1 "speak TLS on this port" "$H_DIR/relay-plain.log" | cut -c1-200)"
harness_stop_pid "$RELAY_PID"
kill "$(cat "$H_DIR/plain.pid")"
PGURL=$PG_TLS relay_start three-again
harness_wait_for 30 relay_unsent_is 0
sent_once_verify "relay restarted on the TLS port"

# 3. insecure=1: no verification (a wrong CA passes), one warning at start
harness_stop_pid "$RELAY_PID"
REDIS_URL="$WRONG&insecure=1" PGURL=$PG_TLS relay_start four
sent_once_send 5
harness_wait_for 30 relay_unsent_is 0
sent_once_verify "insecure=1"
expect_eq "insecure=1 warnings of the relay" 1 "$(grep -c "says insecure=1" "$H_DIR/relay-four.log" || true)"
echo "ok   insecure=1: relayed without verification, warned once"
