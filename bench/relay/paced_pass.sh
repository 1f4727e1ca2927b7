#!/usr/bin/env bash
# bench/relay/paced_pass.sh [version...] - what the relay spends on one message at a low rate, where each
# pass relays one row: pgbench sends paced at RATE a second on one connection for DURATION seconds, and
# per send the relay worker's CPU (utime + stime of the 'chat_outbox relay' backend, /proc/<pid>/stat)
# and the time of chat_outbox.relay_batch (pg_stat_user_functions: its statements, their executor
# start-ups and plpgsql), beside the send's own latency. For each version given (CREATE EXTENSION
# chat_outbox VERSION v, the versions as installed; default: the control file's), ROUNDS times, the
# versions alternating in one cluster so that all see the same minutes of the machine.
#   bench/relay/paced_pass.sh 1.3 1.4        env: RATE (20), DURATION (10), ROUNDS (3)
# A benchmark, not a test: it prints figures and asserts nothing.
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
RATE=${RATE:-20} DURATION=${DURATION:-10} ROUNDS=${ROUNDS:-3}
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(default)
harness_init bench-paced-pass
harness_redis_start
harness_pg_start "" "track_functions = all"
cat >"$H_DIR/send.pgbench" <<'SQL'
\set chat random(1, 1000)
SELECT id FROM consumers.send_message(:chat, 'a message of about sixty bytes, as a chat line often is');
SQL
hz=$(getconf CLK_TCK)
cpu_s() { awk -v hz="$hz" '{ sub(/^.*\) /, ""); printf "%.4f", ($12 + $13) / hz }' "/proc/$1/stat"; } # fields 14, 15
send() { pgbench -n -M prepared -c 1 -R "$RATE" -T "$1" -f "$H_DIR/send.pgbench" "$PGURL" 2>&1; }

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $RATE sends/s for ${DURATION} s, one connection; commit $(git -C "$H_ROOT" rev-parse --short HEAD)"
echo "| round | version | sends | send latency avg | relay CPU per send | relay_batch calls | relay_batch per call |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
	for v in "${versions[@]}"; do
		q "DROP EXTENSION IF EXISTS chat_outbox CASCADE" >/dev/null
		q "CREATE EXTENSION chat_outbox$([ "$v" = default ] || echo " VERSION '$v'")" >/dev/null
		harness_wait_value 20 = running relay_status relay_state
		send 2 >/dev/null # the relay's plans and caches warm, as in a running install
		pid=$(relay_status worker_pid)
		q "SELECT pg_stat_reset()" >/dev/null
		c0=$(cpu_s "$pid")
		out=$(send "$DURATION")
		c1=$(cpu_s "$pid")
		n=$(echo "$out" | awk '/number of transactions actually processed/ { split($NF, a, "/"); print a[1] }')
		lat=$(echo "$out" | awk '/latency average/ { print $4 " " $5 }')
		sleep 1 # the last pass's statistics reach the cumulative statistics
		fn=$(q "SELECT calls || '|' || round((total_time / calls * 1000)::numeric) FROM pg_stat_user_functions WHERE funcname = 'relay_batch'")
		echo "| $round | $(q "SELECT extversion FROM pg_extension WHERE extname = 'chat_outbox'") | $n | $lat | $(awk -v a="$c0" -v b="$c1" -v n="$n" 'BEGIN { printf "%.0f µs", (b - a) * 1e6 / n }') | ${fn%%|*} | ${fn##*|} µs |"
	done
done
