#!/usr/bin/env bash
# bench/tls/run.sh - what TLS to Redis costs per message: the CPU of chat-outbox-relay, chat-outboxd and
# redis-server per message, with redis:// and with rediss://, in the same run, on the same servers.
# One redis-server serves both a plaintext port and a TLS port (certificates of the run's own CA,
# tests/harness/tls_ca.sh); a managed install's outbox is filled with MESSAGES messages (send_message in
# transactions of 1,000), and a chat-outbox-relay and a chat-outboxd --service workers, both started for
# that round with the round's URL, carry them into workers.inbox. CPU (user + system, /proc) from the first
# send to the last row in the inbox, divided by MESSAGES. The modes alternate over ROUNDS rounds, so a
# drift of the machine lands on both. Postgres is reached in plaintext in both (what is measured is Redis').
# Env: MESSAGES (20000), ROUNDS (3). A benchmark, not a test: the figures depend on the machine.
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
. "$(dirname "$0")/../../tests/harness/tls_ca.sh"
. "$(dirname "$0")/../lib/ticks.sh"
MESSAGES=${MESSAGES:-20000} ROUNDS=${ROUNDS:-3}
harness_init bench-tls
tls_ca ca
tls_cert ca server "DNS:localhost"
chmod -R a+rX "$TLS_DIR"
TLS_PORT=$(harness_free_port)
REDIS_EXTRA_ARGS="--tls-port $TLS_PORT --tls-cert-file $TLS_DIR/server.crt --tls-key-file $TLS_DIR/server.key --tls-ca-cert-file $TLS_DIR/ca.crt --tls-auth-clients no"
harness_redis_start
PLAIN_URL=$REDIS_URL
TLS_URL="rediss://localhost:$TLS_PORT?cacert=$TLS_DIR/ca.crt"
HARNESS_PG_MANAGED=1 harness_pg_start "" "shared_buffers = '256MB'"
export REDIS_URL PGURL
daemon_export_settings
CHAT_OUTBOXD_LOG_LEVEL=notice
REDIS_PID=$(cat "$REDIS_PIDFILE")
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); messages=$MESSAGES rounds=$ROUNDS; $(openssl version)"
inbox() { harness_psql "SELECT count(*) FROM workers.inbox"; }
inbox_at_least() { [ "$(inbox)" -ge "$1" ]; }

round() { # round <mode> <url>
	local url=$2 base r0 d0 s0 t0 t1
	REDIS_URL=$url relay_start "$1-$RANDOM"
	local relay=$RELAY_PID
	CHAT_OUTBOXD_REDIS_URL=$url daemon_start "daemon-$1.log" --service workers --queue chat-messages
	local daemon=$DAEMON_PID
	daemon_wait_consuming "daemon-$1.log"
	sleep 1 # both connected and idle
	base=$(inbox)
	r0=$(ticks "$relay") d0=$(ticks "$daemon") s0=$(ticks "$REDIS_PID") t0=$(date +%s%N)
	for ((i = 0; i < MESSAGES; i += 1000)); do
		harness_psql "SELECT count(consumers.send_message(1 + g % 100, 'bench message body of a typical length, about eighty bytes long ' || g))
			FROM generate_series(1, 1000) g" >/dev/null
	done
	harness_wait_for 600 inbox_at_least $((base + MESSAGES))
	t1=$(date +%s%N)
	awk -v m="$1" -v n="$MESSAGES" -v r=$(( $(ticks "$relay") - r0 )) -v d=$(( $(ticks "$daemon") - d0 )) \
		-v s=$(( $(ticks "$REDIS_PID") - s0 )) -v ms=$(( (t1 - t0) / 1000000 )) -v hz="$(getconf CLK_TCK)" \
		'BEGIN { u = 1e6 / hz / n; printf "%-6s relay %6.1f us/msg  daemon %6.1f us/msg  redis-server %6.1f us/msg  (%d ms)\n", m, r * u, d * u, s * u, ms }'
	kill -TERM "$relay" "$daemon"
	harness_wait_for 20 bash -c "! kill -0 $relay 2>/dev/null && ! kill -0 $daemon 2>/dev/null"
}
for ((k = 1; k <= ROUNDS; k++)); do
	round plain "$PLAIN_URL"
	round tls "$TLS_URL"
done
