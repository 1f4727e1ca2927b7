#!/usr/bin/env bash
# tests/extension/redis_tls.sh - the extension's relay over TLS (rediss://) to a redis-server with
# only a TLS port (port 0), certificates of the test's own CA, and a real bullmq Worker on a TLS
# connection working the queue throughout. Each bad case keeps the sends committing and their rows
# waiting, shows a clear error in chat_outbox.status, logs it once, and flows after a reload (or a
# Redis restart) that fixes it: a wrong CA, a wrong name (and sni= that names the right one), a
# plaintext Redis behind rediss://, an expired server certificate, insecure=1 (works, warns once).
# At the end every message was processed once, in send order (one sender).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/tls_ca.sh"
harness_init extension-redis-tls
tls_ca ca
tls_ca other
tls_cert ca server "DNS:localhost"
tls_cert ca expired "DNS:localhost" expired
chmod -R a+rX "$TLS_DIR"
REDIS_PORT=$(harness_free_port)
REDIS_EXTRA_ARGS=$(tls_redis_args server)
REDIS_CLI_AUTH="--tls --cacert $TLS_DIR/ca.crt"
GOOD="rediss://localhost:$REDIS_PORT?cacert=$TLS_DIR/ca.crt"
REDIS_URL=$GOOD
harness_redis_start "$REDIS_PORT"
harness_pg_start

PER_CASE=4 CASES=8
EXPECT=$((PER_CASE * CASES))
OUT=$H_DIR/processed.txt
: >"$OUT"
(cd "$H_ROOT/tests" && REDIS_PORT=$REDIS_PORT TLS_CA=$TLS_DIR/ca.crt OUT=$OUT EXPECT=$EXPECT \
	exec node extension/redis_tls_worker.mjs) >"$H_DIR/worker.log" 2>&1 &
WORKER=$!
harness_track "$WORKER"

sent=0
send() { for _ in $(seq "$PER_CASE"); do sent=$((sent + 1)); q "SELECT consumers.send_message($((sent % 3 + 1)), 'tls $sent')" >/dev/null; done; }
set_url() { q "ALTER SYSTEM SET chat_outbox.redis_url = '$1'" && q "SELECT pg_reload_conf()" >/dev/null; }
error_has() { relay_status last_error | grep -E "$1" >/dev/null; }
log_count() { grep -c -E "redis unreachable: .*($1)" "$H_DIR/postgres.log" || true; }

send
harness_wait_for 20 relay_unsent_is 0
echo "ok   rediss:// with cacert=: $PER_CASE messages relayed over TLS"

# bad_case <name> <url> <error pattern>: rows wait, the error shows and is logged once, then GOOD flows
bad_case() {
	local name=$1 url=$2 pattern=$3 fix=${4:-$GOOD}
	set_url "$url"
	send
	harness_wait_for 30 error_has "$pattern"
	harness_wait_for 10 relay_unsent_is "$PER_CASE"
	sleep 1.5 # a few more retries (the backoff starts at 100 ms): still one line
	[ "$(log_count "$pattern")" -eq 1 ] || fail "$name: logged $(log_count "$pattern") times: $(grep 'redis unreachable' "$H_DIR/postgres.log" | tail -3)"
	echo "ok   $name: rows wait, status says: $(relay_status last_error)"
	set_url "$fix"
	harness_wait_for 30 relay_unsent_is 0
	echo "ok   $name fixed by a reload: the waiting rows went"
}

bad_case "wrong CA" "rediss://localhost:$REDIS_PORT?cacert=$TLS_DIR/other.crt" \
	"certificate verify failed: (unable to get local issuer certificate|self-signed certificate in certificate chain)"
bad_case "wrong name" "rediss://127.0.0.1:$REDIS_PORT?cacert=$TLS_DIR/ca.crt" \
	"certificate verify failed: (IP address mismatch|hostname mismatch)" \
	"rediss://127.0.0.1:$REDIS_PORT?cacert=$TLS_DIR/ca.crt&sni=localhost"

PLAIN_PORT=$(harness_free_port)
redis-server --port "$PLAIN_PORT" --bind 127.0.0.1 --save '' --daemonize yes --dir "$H_DIR" \
	--pidfile "$H_DIR/plain.pid" --logfile "$H_DIR/plain.log"
harness_wait_for 10 redis-cli -p "$PLAIN_PORT" ping
bad_case "plaintext Redis behind rediss://" "rediss://localhost:$PLAIN_PORT?cacert=$TLS_DIR/ca.crt" \
	"does not speak TLS|speak TLS on this port"
kill "$(cat "$H_DIR/plain.pid")"

# an expired server certificate: Redis restarted with it (redis-cli skips the check to stop it)
harness_redis_stop
REDIS_EXTRA_ARGS=$(tls_redis_args expired)
REDIS_CLI_AUTH="--tls --insecure"
harness_redis_start_again
send
harness_wait_for 30 error_has "certificate verify failed: certificate has expired"
harness_wait_for 10 relay_unsent_is "$PER_CASE"
sleep 1.5
[ "$(log_count "certificate has expired")" -eq 1 ] || fail "expired: logged $(log_count "certificate has expired") times"
echo "ok   expired certificate: rows wait, status says: $(relay_status last_error)"
harness_redis_stop
REDIS_EXTRA_ARGS=$(tls_redis_args server)
REDIS_CLI_AUTH="--tls --cacert $TLS_DIR/ca.crt"
harness_redis_start_again
harness_wait_for 30 relay_unsent_is 0
echo "ok   expired certificate replaced (Redis restarted): the waiting rows went"

# insecure=1: no verification (a wrong CA passes), one warning per setting
set_url "rediss://localhost:$REDIS_PORT?cacert=$TLS_DIR/other.crt&insecure=1"
send
harness_wait_for 30 relay_unsent_is 0
warned=$(grep -c "insecure=1: the Redis server's certificate is not verified" "$H_DIR/postgres.log" || true)
[ "$warned" -eq 1 ] || fail "insecure=1 warned $warned times"
echo "ok   insecure=1: relayed without verification, warned once"

# a client certificate (Redis asks for one with tls-auth-clients yes)
tls_cert ca client "DNS:relay"
chmod -R a+rX "$TLS_DIR"
harness_redis_stop
REDIS_EXTRA_ARGS="$(tls_redis_args server) --tls-auth-clients yes"
REDIS_CLI_AUTH="--tls --cacert $TLS_DIR/ca.crt --cert $TLS_DIR/client.crt --key $TLS_DIR/client.key"
harness_redis_start_again
set_url "rediss://localhost:$REDIS_PORT?cacert=$TLS_DIR/ca.crt&cert=$TLS_DIR/client.crt&key=$TLS_DIR/client.key"
send
harness_wait_for 30 relay_unsent_is 0
echo "ok   client certificate (tls-auth-clients yes): relayed"
harness_redis_stop
REDIS_EXTRA_ARGS=$(tls_redis_args server)
REDIS_CLI_AUTH="--tls --cacert $TLS_DIR/ca.crt"
harness_redis_start_again
set_url "$GOOD"
send
harness_wait_for 30 relay_unsent_is 0

[ "$sent" -eq "$EXPECT" ] || fail "the suite sent $sent, the worker expects $EXPECT"
harness_wait_for 60 bash -c "! kill -0 $WORKER 2>/dev/null"
wait "$WORKER" || fail "the worker failed: $(tail -5 "$H_DIR/worker.log")"
# lost / twice / out of order, against what Postgres stored
q "SELECT (o.payload ->> 'id') || ' ' || m.chat_id || ' ' || m.body FROM consumers.outbox o
   JOIN consumers.messages m ON m.id = (o.payload ->> 'id')::uuid ORDER BY o.id" >"$H_DIR/stored.txt"
stored=$(wc -l <"$H_DIR/stored.txt")
processed=$(wc -l <"$OUT")
distinct=$(cut -d' ' -f1 "$OUT" | sort -u | wc -l)
lost=$(comm -23 <(cut -d' ' -f1 "$H_DIR/stored.txt" | sort) <(cut -d' ' -f1 "$OUT" | sort -u) | wc -l)
twice=$((processed - distinct))
[ "$stored" -eq "$EXPECT" ] || fail "postgres stored $stored of $EXPECT"
[ "$lost" -eq 0 ] && [ "$twice" -eq 0 ] || fail "lost $lost, twice $twice"
cmp -s "$H_DIR/stored.txt" "$OUT" || fail "out of order: $(diff "$H_DIR/stored.txt" "$OUT" | head -5)"
echo "ok   the worker over TLS processed $processed of $EXPECT: lost 0, twice 0, out of order 0"
if grep "chat_outbox relay" "$H_DIR/postgres.log" | grep -q "^.*ERROR"; then
	fail "the relay logged an ERROR: $(grep 'chat_outbox relay' "$H_DIR/postgres.log" | grep ERROR | head -3)"
fi
