#!/usr/bin/env bash
# bench/managed/compare.sh - the wake-ups side by side in one run, on the same machine and Redis:
#   extension  the relay inside Postgres, its latch set at commit
#   notify     the managed install, chat-outbox-relay woken by NOTIFY (settings.wake = 'notify')
#   logical    the managed install, chat-outbox-relay --wake logical (settings.wake = 'wal')
#   poll       the managed install with the wake_relay trigger disabled, --poll-interval 20
# Every cluster runs with wal_level = logical, so all write the same WAL, and a chat-outboxd
# (--service workers) consumes the queue and shows messages to Socket.IO clients. For each:
#   - send -> shown (send_message() called -> the message at a Socket.IO client of its chat) over
#     SENDS paced sends (PACE_MS apart), nothing else running (bench/managed/shown.mjs);
#   - with 1, 8 and 32 pgbench senders calling send_message for DURATION s: sends/s (what the
#     wake-up costs concurrent senders: compare with poll, whose senders pay nothing), and meanwhile
#     a probe's send -> shown (PROBE sends 20 ms apart on one more connection);
#   - the relay's CPU per message over those runs (the bgworker, or chat-outbox-relay), and for
#     logical the walsender's (decoding happens in Postgres).
# Env: SENDS (300), PACE_MS (10), DURATION (8), PROBE (150), MODES ("extension notify logical poll").
# A benchmark, not a test: the figures depend on the machine.
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
. "$(dirname "$0")/../lib/ticks.sh"
SENDS=${SENDS:-300} PACE_MS=${PACE_MS:-10} DURATION=${DURATION:-8} PROBE=${PROBE:-150}
MODES=${MODES:-extension notify logical poll}
harness_init bench-managed-compare
harness_redis_start
export REDIS_URL
unsent() { harness_psql "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL"; }
received_all() { [ "$(harness_psql "SELECT (SELECT count(*) FROM consumers.messages) - (SELECT count(*) FROM workers.inbox)")" = 0 ]; }
latency() { node "$H_ROOT/bench/managed/shown.mjs" "$1" "$2"; } # latency <count> <pace ms>: send -> shown
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); sends=$SENDS pace=${PACE_MS}ms duration=${DURATION}s probe=$PROBE"
cd "$H_ROOT/tests"

measure() { # measure <mode> <relay pid> [walsender pid]
	echo "## $1"
	echo "idle: send -> shown $(latency "$SENDS" "$PACE_MS")"
	local clients tps r0 w0 n0 rows=0 relay_ticks=0 wal_ticks=0
	for clients in 1 8 32; do
		r0=$(ticks_or_0 "$2") w0=$([ -z "${3:-}" ] && echo 0 || ticks_or_0 "$3") n0=$(harness_psql "SELECT count(*) FROM consumers.outbox")
		(sleep 1 && latency "$PROBE" 20 >"$H_DIR/probe.txt") &
		local probe=$!
		tps=$("$PG_BIN/pgbench" -n -f "$H_ROOT/bench/relay/send_message.pgbench" -c "$clients" -j "$(( clients < 4 ? clients : 4 ))" \
			-T "$DURATION" "$PGURL" 2>/dev/null | awk '/^tps/ {printf "%.0f", $3}')
		wait $probe
		harness_wait_value 120 = 0 unsent
		harness_wait_for 300 received_all # the daemon caught up: the next probe does not wait behind this run
		relay_ticks=$((relay_ticks + $(ticks_or_0 "$2") - r0))
		[ -z "${3:-}" ] || wal_ticks=$((wal_ticks + $(ticks_or_0 "$3") - w0))
		rows=$((rows + $(harness_psql "SELECT count(*) FROM consumers.outbox") - n0))
		echo "senders $clients: $tps sends/s; probe meanwhile: send -> shown $(cat "$H_DIR/probe.txt")"
	done
	echo "relay CPU per message over those runs: $((relay_ticks * 10000 / rows)) us ($rows messages)"
	[ -z "${3:-}" ] || echo "walsender (decoding) CPU per message: $((wal_ticks * 10000 / rows)) us"
}
daemon_up() { # the receiving side, the same in every mode
	daemon_export_settings
	CHAT_OUTBOXD_LOG_LEVEL=notice daemon_start "daemon-$1.log" --service workers
	daemon_wait_healthy
	export DAEMON_URL
}
managed_start() { # managed_start <name> [relay flags...]
	HARNESS_PG_MANAGED=1 harness_pg_start "" "shared_buffers = '256MB'" "wal_level = logical"
	relay_start "$@"
	harness_wait_value 20 = running relay_status relay_state
	daemon_up "$1"
}
managed_stop() {
	kill -TERM "$RELAY_PID"
	wait "$RELAY_PID" || true
	daemon_stop || true
	harness_pg_ctl stop -m fast -w >/dev/null
	rm -rf "$PG_DATA"
	rcli FLUSHALL >/dev/null
}

for mode in $MODES; do
	case $mode in
	extension)
		harness_pg_start "" "shared_buffers = '256MB'" "wal_level = logical"
		worker_pid() { harness_psql "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'"; }
		harness_wait_value 30 != "" worker_pid
		daemon_up extension
		measure "extension (bgworker, latch set at commit)" "$(worker_pid)"
		daemon_stop || true
		harness_pg_ctl stop -m fast -w >/dev/null
		rm -rf "$PG_DATA"
		rcli FLUSHALL >/dev/null
		;;
	notify)
		managed_start compare-notify
		measure "managed, NOTIFY (chat-outbox-relay, wake = 'notify')" "$RELAY_PID"
		managed_stop
		;;
	logical)
		managed_start compare-logical
		psql -XAtq "$PG_SUPER_URL" -c "ALTER ROLE chat_owner REPLICATION" >/dev/null
		harness_psql "UPDATE chat_outbox.settings SET wake = 'wal'"
		kill -TERM "$RELAY_PID"
		wait "$RELAY_PID" || true
		relay_start compare-logical2 --wake logical
		harness_wait_for 20 grep -q "logical wake-up streaming" "$H_DIR/relay-compare-logical2.log"
		walsender() { harness_psql "SELECT pid FROM pg_stat_activity WHERE backend_type = 'walsender'"; }
		measure "managed, logical decoding (chat-outbox-relay --wake logical, wake = 'wal')" "$RELAY_PID" "$(walsender)"
		managed_stop
		;;
	poll)
		managed_start compare-poll --poll-interval 20
		harness_psql "ALTER TABLE consumers.outbox DISABLE TRIGGER wake_relay"
		measure "managed, trigger disabled (chat-outbox-relay --poll-interval 20)" "$RELAY_PID"
		managed_stop
		;;
	esac
done
