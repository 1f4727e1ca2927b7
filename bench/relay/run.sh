#!/usr/bin/env bash
# bench/relay/run.sh - figures for the relay (bench/relay/README.md; recorded runs in docs/journal/relay.md).
#   1. commit -> job visible in Redis over paced sends, wake at commit on and off
#   2. drain rate of a backlog built while Redis was down, beside what Redis alone takes (the ceiling)
#   3. send_message throughput with the relay on vs paused, several connections (pgbench), and what
#      the relay and Redis spend per row beside what a send costs; once with every process on every
#      core, once with the senders on core 0 and the relay and Redis on core 1 (taskset)
# Env: SENDS (1000), PACE_MS (5), BACKLOG (100000), CLIENTS (4), DURATION (5 s), ROUNDS (6), BATCH (500), MIN_PASS (5 ms),
#      SECTIONS ("latency drain rate": any subset), SENT_ROWS (0: sent rows put in the outbox
#      before the latency section), SENT_AGE (0: how long ago they were sent; older than retention, and the purge runs throughout)
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
. "$(dirname "$0")/../lib/ticks.sh"
SENDS=${SENDS:-1000} PACE_MS=${PACE_MS:-5} BACKLOG=${BACKLOG:-100000}
CLIENTS=${CLIENTS:-4} DURATION=${DURATION:-5} ROUNDS=${ROUNDS:-6} BATCH=${BATCH:-500} SECTIONS=${SECTIONS:-latency drain rate}
SENT_ROWS=${SENT_ROWS:-0} SENT_AGE=${SENT_AGE:-0}
section() { [[ " $SECTIONS " == *" $1 "* ]]; }
HERE=$H_ROOT/bench/relay
harness_init bench-relay
harness_redis_start
harness_pg_start "" ${PG_EXTRA_CONF:+"$PG_EXTRA_CONF"} "chat_outbox.batch_size = $BATCH" "chat_outbox.min_pass_interval = ${MIN_PASS:-5}" "shared_buffers = '256MB'"
export REDIS_URL PGURL
setting() { q "ALTER SYSTEM SET chat_outbox.$1 = '$2'" && q "SELECT pg_reload_conf()" >/dev/null; sleep 0.3; }
unsent() { q "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL"; }
now_ms() { date +%s%3N; }

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# batch_size=$BATCH min_pass_interval=${MIN_PASS:-5}ms sends=$SENDS pace=${PACE_MS}ms backlog=$BACKLOG clients=$CLIENTS duration=${DURATION}s"

cd "$H_ROOT/tests"
if section latency; then
echo "## 1. commit -> visible in Redis ($SENDS sends, one every $PACE_MS ms)"
if [ "$SENT_ROWS" -gt 0 ]; then # an outbox holding a retention window of rows already sent, as in production
	q "INSERT INTO consumers.outbox (event, payload, sent_at) SELECT 'message.created', jsonb_build_object('n', g), now() - interval '$SENT_AGE' FROM generate_series(1, $SENT_ROWS) g" >/dev/null
	echo "outbox holds $SENT_ROWS rows sent $SENT_AGE ago (retention $(q "SHOW chat_outbox.retention"))"
fi
echo "wake_at_commit=on:  $(node "$HERE/latency.mjs" "$SENDS" "$PACE_MS")"
setting wake_at_commit off
echo "wake_at_commit=off: $(node "$HERE/latency.mjs" "$SENDS" "$PACE_MS")"
setting wake_at_commit on
fi

if section drain; then
echo "## 2. drain after a Redis outage ($BACKLOG rows)"
wait_key=bull:chat-messages:wait
base=$(redis-cli -p "$REDIS_PORT" LLEN $wait_key)
harness_redis_stop
t=$(now_ms)
q "SELECT count(consumers.send_message(g % 100, 'backlog message ' || g)) FROM generate_series(1, $BACKLOG) g" >/dev/null
echo "built backlog of $(unsent) rows in $(( $(now_ms) - t )) ms (one statement)"
harness_redis_start_again
redis-cli -p "$REDIS_PORT" CONFIG RESETSTAT >/dev/null
relay_pid=$(q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'")
r0=$(ticks "$relay_pid") d0=$(ticks "$(cat "$REDIS_PIDFILE")")
t_up=$(now_ms)
# timed from Redis' side over one connection: polling Postgres with a psql per check took CPU from the drain
read -r t_first t_done < <(node "$HERE/wait_jobs.mjs" "$REDIS_PORT" $wait_key "$base" "$BACKLOG" 300 | sed 's/[a-z]*=//g')
harness_wait_for 60 bash -c "[ \$(psql -XAtq '$PGURL' -c 'SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL') -eq 0 ]"
echo "redis up -> first batch: $((t_first - t_up)) ms (backoff); first batch -> drained: $((t_done - t_first)) ms"
echo "drain rate: $(( BACKLOG * 1000 / (t_done - t_first + 1) )) rows/s (incl. backoff: $(( BACKLOG * 1000 / (t_done - t_up + 1) )) rows/s)"
# usec of EVALSHA as Redis counts it: the script's own run time, without reading the request or waiting for a core
script_us=$(redis-cli -p "$REDIS_PORT" INFO commandstats | tr -d '\r' | awk -F'[=,]' '/^cmdstat_evalsha:/ {print $4}')
echo "drain CPU per row: relay worker $(( ($(ticks "$relay_pid") - r0) * 10000 / BACKLOG )) us, redis $(( ($(ticks "$(cat "$REDIS_PIDFILE")") - d0) * 10000 / BACKLOG )) us, of which the batch-add script $(( ${script_us:-0} / BACKLOG )) us"
echo "redis wait list: $(redis-cli -p "$REDIS_PORT" LLEN bull:chat-messages:wait) jobs"
echo "reference, same Redis: $(node "$HERE/bullmq_ceiling.mjs" "$REDIS_PORT" 30000)"
# What Redis takes when the relay's script is all it runs: first as the drain left it (holding the drained
# jobs, more than when the drain began), then emptied, where nothing it holds slows it down.
for state in "as the drain left it" "after FLUSHALL"; do
	[ "$state" = "after FLUSHALL" ] && redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
	for in_flight in 1 2; do
		echo "ceiling, Redis $state: $(node "$HERE/redis_ceiling.mjs" "$REDIS_PORT" "$BACKLOG" $in_flight)"
	done
done
fi

section rate || exit 0

echo "## 3. send_message rate, $CLIENTS connections (pgbench), $ROUNDS alternations of ${DURATION}s relay on / paused"
drained() { harness_wait_for 120 bash -c "[ \$(psql -XAtq '$PGURL' -c 'SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL') -eq 0 ]"; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
relay_running() { [ -n "$(q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'")" ]; }
harness_wait_for 30 relay_running
relay_pid=$(q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'")
redis_pid=$(cat "$REDIS_PIDFILE")
postmaster_pid=$(head -1 "$PG_DATA/postmaster.pid")
busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; } # the whole machine's busy CPU, in 1/100 s
# pin <cpus for Postgres and pgbench> <cpus for the relay and Redis>: new backends inherit the postmaster's
pin() {
	local p t
	for p in "$postmaster_pid" $(pgrep -P "$postmaster_pid"); do taskset -pc "$1" "$p" >/dev/null; done
	taskset -pc "$2" "$relay_pid" >/dev/null
	for t in /proc/"$redis_pid"/task/*; do taskset -pc "$2" "${t##*/}" >/dev/null; done
}

# alternate <label> <cpus for the senders>: ROUNDS alternations relay on / paused, then the medians and the CPU figures
alternate() {
	local relay_ticks=0 redis_ticks=0 rows_on=0 busy_off=0 rows_off=0 ons=() offs=() r0 d0 n0 b0 on off
	bench() { taskset -c "$1" "$PG_BIN/pgbench" -n -f "$HERE/send_message.pgbench" -c "$CLIENTS" -j 2 -T "$DURATION" "$PGURL" 2>/dev/null | awk '/^tps/ {printf "%.0f", $3}'; }
	for round in $(seq "$ROUNDS"); do
		setting relay_enabled on
		r0=$(ticks "$relay_pid") d0=$(ticks "$redis_pid") n0=$(q "SELECT count(*) FROM consumers.outbox")
		ons+=("$(bench "$2")")
		drained
		relay_ticks=$((relay_ticks + $(ticks "$relay_pid") - r0)) redis_ticks=$((redis_ticks + $(ticks "$redis_pid") - d0))
		rows_on=$((rows_on + $(q "SELECT count(*) FROM consumers.outbox") - n0))
		drained
		setting relay_enabled off
		b0=$(busy) n0=$(q "SELECT count(*) FROM consumers.outbox")
		offs+=("$(bench "$2")")
		busy_off=$((busy_off + $(busy) - b0)) rows_off=$((rows_off + $(q "SELECT count(*) FROM consumers.outbox") - n0))
		setting relay_enabled on
		drained
	done
	on=$(median "${ons[@]}") off=$(median "${offs[@]}")
	echo "### $1"
	echo "relay on:     ${ons[*]} tps (median $on)"
	echo "relay paused: ${offs[*]} tps (median $off)"
	echo "relay costs senders $(( (off - on) * 100 / off ))% (medians)"
	echo "CPU while relaying $rows_on rows: relay worker $((relay_ticks * 10000 / rows_on)) us/row, redis $((redis_ticks * 10000 / rows_on)) us/row"
	# what 10% of a send is, in CPU: everything the machine did per send with the relay paused (Postgres, pgbench)
	echo "CPU per send with the relay paused: $((busy_off * 10000 / rows_off)) us (whole machine, $rows_off sends); 10% of it is $((busy_off * 1000 / rows_off)) us"
}

all_cpus="0-$(($(nproc) - 1))"
alternate "all processes share the $(nproc) cores" "$all_cpus"
if [ "$(nproc)" -ge 2 ]; then
	# As in production, where Redis runs elsewhere and the relay has a spare core: the senders
	# (Postgres, pgbench) get core 0 in both arms, so what is left is what relaying costs them
	# through Postgres itself (the commit-time wake-up, WAL, locks), not CPU taken from them.
	pin 0 1
	alternate "senders on core 0, relay and Redis on core 1" 0
	pin "$all_cpus" "$all_cpus"
fi
