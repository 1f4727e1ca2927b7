#!/usr/bin/env bash
# bench/managed/compare.sh - the two modes side by side in one run, on the same machine and Redis:
# the extension (relay inside Postgres, woken at commit) and the managed install (chat-outbox-relay,
# woken by NOTIFY; then with the trigger disabled and a 20 ms poll). For each: commit -> job
# visible in Redis over paced sends, send_message throughput with 1, 8 and 32 pgbench senders while
# the relay relays, and the relay's CPU per message over those runs.
# Env: SENDS (500), PACE_MS (5), DURATION (8 s per throughput run).
# A benchmark, not a test: the figures depend on the machine.
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
SENDS=${SENDS:-500} PACE_MS=${PACE_MS:-5} DURATION=${DURATION:-8}
harness_init bench-managed-compare
harness_redis_start
export REDIS_URL
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system CPU, in 1/100 s
unsent() { harness_psql "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL"; }
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); sends=$SENDS pace=${PACE_MS}ms duration=${DURATION}s"
cd "$H_ROOT/tests"

measure() { # measure <mode> <relay pid>
	echo "## $1"
	echo "commit -> visible: $(node "$H_ROOT/bench/relay/latency.mjs" "$SENDS" "$PACE_MS")"
	local clients tps r0 n0 rows=0 relay_ticks=0
	for clients in 1 8 32; do
		r0=$(ticks "$2") n0=$(harness_psql "SELECT count(*) FROM consumers.outbox")
		tps=$("$PG_BIN/pgbench" -n -f "$H_ROOT/bench/relay/send_message.pgbench" -c "$clients" -j "$(( clients < 4 ? clients : 4 ))" \
			-T "$DURATION" "$PGURL" 2>/dev/null | awk '/^tps/ {printf "%.0f", $3}')
		harness_wait_value 120 = 0 unsent
		relay_ticks=$((relay_ticks + $(ticks "$2") - r0))
		rows=$((rows + $(harness_psql "SELECT count(*) FROM consumers.outbox") - n0))
		echo "senders $clients: $tps sends/s, all relayed"
	done
	echo "relay CPU per message over those runs: $((relay_ticks * 10000 / rows)) us ($rows messages)"
}

harness_pg_start "" "shared_buffers = '256MB'"
worker_pid() { harness_psql "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'"; }
harness_wait_value 30 != "" worker_pid
measure "extension (bgworker, wake at commit)" "$(worker_pid)"
harness_pg_ctl stop -m fast -w >/dev/null
rm -rf "$PG_DATA"
rcli FLUSHALL >/dev/null

HARNESS_PG_MANAGED=1 harness_pg_start "" "shared_buffers = '256MB'"
relay_start compare
harness_wait_value 20 = running relay_status relay_state
measure "managed install (chat-outbox-relay, NOTIFY)" "$RELAY_PID"

# the managed install with the wake-up off: the relay polls every 20 ms, senders pay no NOTIFY
kill -TERM "$RELAY_PID"
wait "$RELAY_PID" || true
harness_psql "ALTER TABLE consumers.outbox DISABLE TRIGGER wake_relay"
relay_start compare-poll --poll-interval 20
harness_wait_value 20 = running relay_status relay_state
measure "managed install, trigger disabled (chat-outbox-relay --poll-interval 20)" "$RELAY_PID"
