#!/usr/bin/env bash
# bench/scale/throughput.sh - throughput and CPU per message of one service with 1, 2 and 4 partitions and 1, 2
# and 3 gateways (docs/journal/scale.md, "Scale-out: partitions and gateways"). Not a test.
#
# Every gateway is an ordinary chat-outboxd of service workers (--consume on, the default): the partitions are
# shared among them by leases, so min(partitions, gateways) of them consume, and every one of them receives and
# decodes every message from the bus (that is what a gateway pays for its clients to be shown the whole service).
# No client is connected: what is measured is the pipeline and the bus, not a fan-out.
# Each round: the gateways start and share the leases, BACKLOG messages over 100 chats wait in the outbox with the
# relay paused, then the relay is turned on and the backlog drains (relay -> Redis -> consumers -> inbox -> bus).
# Prints messages/s (first to last row in the inbox) and CPU per message (utime + stime from /proc) of the daemons
# together, of the average gateway, of Postgres (every process: the relay worker, the daemons' backends), of Redis,
# and of all of them.
# Env: BACKLOG (30000), PARTITIONS ("1 2 4", in that order), GATEWAYS ("1 2 3").
# Run from a clone after scripts/setup.sh (it builds the daemon and installs the extension): bash bench/scale/throughput.sh
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
. "$(dirname "$0")/../lib/ticks.sh"
BACKLOG=${BACKLOG:-30000} PARTITIONS=${PARTITIONS:-"1 2 4"} GATEWAYS=${GATEWAYS:-"1 2 3"}
daemon_env bench-scale
setting() { q "ALTER SYSTEM SET $1 = '$2'" && q "SELECT pg_reload_conf()" >/dev/null; }
pg_ticks() { # the postmaster (with its reaped children) and every live child
	local pm sum c
	pm=$(head -1 "$PG_DATA/postmaster.pid")
	sum=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
	for c in $(pgrep -P "$pm"); do sum=$((sum + $(ticks_or_0 "$c"))); done
	echo "$sum"
}
Q=chat-messages
lease_key() { if [ "$1" = 1 ]; then echo "bull:$Q:lease"; else echo "bull:$Q-p$2:lease"; fi; }
holders() { local k; for k in $(seq 0 $(($1 - 1))); do rcli GET "$(lease_key "$1" "$k")"; done | sort -u | grep -c . || true; }
# inbox rows above seq $1 reach $2: an index range scan, polled every 200 ms, so the polling stays a small part of
# Postgres' CPU (a count of the whole inbox and outbox every 50 ms grew with every round and took a good part of it)
wait_inbox_above() {
	local deadline=$(($(date +%s) + 300))
	until [ "$(q "SELECT count(*) FROM workers.inbox WHERE seq > $1")" -ge "$2" ]; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "timed out waiting for $2 inbox rows above seq $1" >&2; return 1; }
		sleep 0.2
	done
}
high() { q "SELECT coalesce(max(seq), 0) FROM workers.inbox"; }
rpid=$(cat "$REDIS_PIDFILE") hz=$(getconf CLK_TCK)

echo "# $(date -u +%FT%TZ) $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg); backlog $BACKLOG over 100 chats, one Redis"
printf '%-10s %-8s %-9s %8s %15s %16s %16s %13s %14s %13s\n' partitions gateways consuming msgs/s daemons_us/msg per_gateway_us/msg postgres_us/msg redis_us/msg total_us/msg load
for p in $PARTITIONS; do
	setting chat_outbox.relay_enabled on
	q "SELECT chat_outbox.set_partitions('consumers', $p)" >/dev/null
	# the relay writes the layout with its first job under the new count
	warm_seq=$(high) warm=$p
	q "SELECT count(consumers.send_message(g, 'warm-up')) FROM generate_series(1, $p) g" >/dev/null
	harness_wait_for 60 sh -c "[ \"\$(redis-cli -p $REDIS_PORT GET bull:$Q:partitions)\" = $p ] || [ $p = 1 ]"
	for g in $GATEWAYS; do
		pids=()
		for i in $(seq 1 "$g"); do
			daemon_start "p$p-g$g-$i.log" --service workers --queue $Q --identity "gw$i" --log-level notice
			pids+=("$DAEMON_PID")
		done
		consuming=$((p < g ? p : g))
		harness_wait_value 60 -eq "$consuming" holders "$p"
		wait_inbox_above "$warm_seq" "$warm"
		warm=0
		setting chat_outbox.relay_enabled off
		seq0=$(high)
		q "SELECT count(consumers.send_message(1 + n % 100, 'scale ' || n)) FROM generate_series(1, $BACKLOG) n" >/dev/null
		load=$(cut -d' ' -f1 /proc/loadavg)
		d0=0; for pid in "${pids[@]}"; do d0=$((d0 + $(ticks "$pid"))); done
		pg0=$(pg_ticks) r0=$(ticks "$rpid")
		setting chat_outbox.relay_enabled on
		wait_inbox_above "$seq0" "$BACKLOG"
		# the gateways decode the last bus messages a moment after the last commit
		sleep 1
		d1=0; for pid in "${pids[@]}"; do d1=$((d1 + $(ticks "$pid"))); done
		pg1=$(pg_ticks) r1=$(ticks "$rpid")
		wall=$(q "SELECT extract(epoch FROM max(received_at) - min(received_at)) FROM workers.inbox WHERE seq > $seq0")
		awk -v p="$p" -v g="$g" -v c="$consuming" -v n="$BACKLOG" -v wall="$wall" -v hz="$hz" -v load="$load" \
			-v d=$((d1 - d0)) -v pg=$((pg1 - pg0)) -v r=$((r1 - r0)) 'BEGIN {
			us = 1e6 / hz / n
			printf "%-10d %-8d %-9d %8.0f %15.1f %16.1f %16.1f %13.1f %14.1f %13s\n", p, g, c, n / wall, d * us, d * us / g, pg * us, r * us, (d + pg + r) * us, load
		}'
		daemons_stop "${pids[@]}"
	done
done
