#!/usr/bin/env bash
# bench/daemon/drain.sh - how fast one chat-outboxd drains a backlog already in Redis, alone.
#
#   bench/daemon/drain.sh [--jobs N] [--batch-size B] [--perf FILE] [--runs R] [--commandstats]
#
# The relay fills the queue while no daemon runs (Redis jobs written by the extension, as in
# production); then the daemon starts and we time first-row-to-last-row in workers.inbox.
# --perf records the daemon with `perf record -g` into FILE during the drain (PERF_REDIS=1: Redis
# too). --commandstats also prints INFO commandstats of the commands the scripts ran. Prints
# figures only: the drain rate, the daemon's CPU, and where Redis spent its time.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/harness/lib.sh"
JOBS=100000 BATCH=500 PERF="" RUNS=1 CMDSTATS='^cmdstat_(evalsha|eval|bzpopmin):'
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) JOBS=$2; shift 2 ;;
	--batch-size) BATCH=$2; shift 2 ;;
	--perf) PERF=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--commandstats) CMDSTATS='^cmdstat_'; shift ;;
	*) echo "usage: $0 [--jobs N] [--batch-size B] [--perf FILE] [--runs R] [--commandstats]" >&2; exit 2 ;;
	esac
done
daemon_env bench-drain
harness_psql "ALTER SYSTEM SET chat_outbox.batch_size = 5000" >/dev/null
harness_psql "SELECT pg_reload_conf()" >/dev/null

for ((run = 1; run <= RUNS; run++)); do
	harness_psql "TRUNCATE workers.inbox" >/dev/null
	redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
	harness_psql "SELECT count(consumers.send_message(1 + g % 10, 'drain ' || g)) FROM generate_series(1, $JOBS) g" >/dev/null
	harness_wait_for 120 sh -c "[ \"\$(psql -XAtq '$PGURL' -c 'SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL')\" = 0 ]"
	redis-cli -p "$REDIS_PORT" CONFIG RESETSTAT >/dev/null
	# The slowlog also logs every command a script runs: at 0 it logged thousands per batch and
	# cost Redis about 20 us per job, a fifth of what it measured. A batch's script takes
	# milliseconds, the commands inside it microseconds, so 1 ms keeps the scripts only.
	redis-cli -p "$REDIS_PORT" CONFIG SET slowlog-log-slower-than 1000 >/dev/null
	redis-cli -p "$REDIS_PORT" CONFIG SET slowlog-max-len 100000 >/dev/null
	redis-cli -p "$REDIS_PORT" SLOWLOG RESET >/dev/null
	harness_psql "SELECT pg_stat_reset()" >/dev/null
	daemon_start "drain-$run.log" --service workers --queue chat-messages --batch-size "$BATCH" --log-level notice
	pid=$DAEMON_PID
	if [ -n "$PERF" ]; then
		perf record -g -o "$PERF" -p "$pid${PERF_REDIS:+,$(cat "$REDIS_PIDFILE")}" >/dev/null 2>&1 &
		perf_pid=$!
	fi
	rpid=$(cat "$REDIS_PIDFILE")
	cpu0=$(awk '{print $14+$15}' /proc/$pid/stat) rcpu0=$(awk '{print $14+$15}' /proc/$rpid/stat)
	harness_wait_for 300 sh -c "[ \"\$(psql -XAtq '$PGURL' -c 'SELECT count(*) FROM workers.inbox')\" -ge $JOBS ]"
	cpu1=$(awk '{print $14+$15}' /proc/$pid/stat) rcpu1=$(awk '{print $14+$15}' /proc/$rpid/stat)
	[ -n "$PERF" ] && { kill -INT "$perf_pid"; wait "$perf_pid" || true; }
	harness_psql "SELECT $JOBS, round(extract(epoch FROM max(received_at) - min(received_at))::numeric, 3),
		round(($JOBS / nullif(extract(epoch FROM max(received_at) - min(received_at)), 0))::numeric)
		FROM workers.inbox" | awk -F'|' -v cpu=$((cpu1 - cpu0)) -v rcpu=$((rcpu1 - rcpu0)) -v hz="$(getconf CLK_TCK)" -v n="$JOBS" \
		'{printf "drain run: %d jobs in %s s = %s jobs/s; CPU daemon %.2f s (%.1f us/job), redis %.2f s (%.1f us/job)\n", $1, $2, $3, cpu/hz, cpu/hz*1e6/n, rcpu/hz, rcpu/hz*1e6/n}'
	kill "$pid"; wait "$pid" 2>/dev/null || true
	# where the wall time went: Redis's own time in scripts, Postgres's time in the inbox statement
	redis-cli -p "$REDIS_PORT" INFO commandstats | grep -E "$CMDSTATS" | sed 's/^/  redis /'
	# per script: SLOWLOG keeps each call's duration and its first arguments (the sha); calls
	# under 1 ms (an empty fetch) are not in it
	redis-cli -p "$REDIS_PORT" SLOWLOG GET 100000 | awk '
		{ lines[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) if (lines[i] == "evalsha" || lines[i] == "EVALSHA") { sha = lines[i + 1]; us = lines[i - 1]; tot[sha] += us; cnt[sha]++ }
			for (s in tot) printf "  redis script %.8s: %d calls over 1 ms, %.0f us/call\n", s, cnt[s], tot[s] / cnt[s]
		}'
	harness_psql "SELECT '  postgres xact_commit=' || xact_commit || ' tup_inserted=' || tup_inserted FROM pg_stat_database WHERE datname = current_database()"
done
