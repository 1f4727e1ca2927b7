#!/usr/bin/env bash
# bench/cost/run.sh - where one message's work goes, in the extension mode: Postgres statements, WAL,
# row versions and CPU by process, per message, end to end (send_message -> relay -> Redis -> chat-outboxd
# -> inbox), and the vacuum the run leaves behind.
#
#   bench/cost/run.sh [--messages N] [--senders S] [--rounds R] [--retention T] [--out FILE]
#
#   --messages N   messages per round (default 20000), sent by pgbench -M prepared with S clients (default 8)
#   --rounds R     repeat R times on the same servers (default 3) and print each round: the spread
#                  says how much one figure can be trusted
#   --retention T  chat_outbox.retention (default 1s: the purge or the rotation runs inside each half, at a
#                  pace no deployment has: with 1.2 a generation is truncated every second or two). With a
#                  retention longer than the run (e.g. 1h) a half ends when every row is sent, not purged:
#                  what a message costs where the rotation is amortized over a day's messages
#   --out FILE     also write the report (markdown) there
#
# One round has two halves on the same servers: raw (chat_outbox.relay_enabled = off: send_message alone)
# and end to end (the relay on, until all N are in workers.inbox and the outbox holds no sent row:
# chat_outbox.retention = 1s makes the relay's purge (1.1) or rotation (1.2: the outbox's generations,
# truncated) part of it). Autovacuum is off for the tables the path writes, so the vacuum each half
# needs is run at its end, measured on its own. Either outbox layout: 1.1's table or 1.2's generations.
# Figures: pg_stat_statements (track = all: the statements inside send_message and the relay's SPI
# statements are separate rows), WAL by insert position, pg_stat_user_tables, and CPU from /proc: the relay worker,
# the daemon's inbox connection, the daemon and Redis by pid; the senders' backends by difference from the
# whole Postgres tree (the postmaster's own time, its reaped children's and its live children's).
# Speed is printed, never asserted. Needs what scripts/setup.sh installs (pgbench, the built daemon).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MESSAGES=20000 SENDERS=8 ROUNDS=3 RETENTION=1s OUT=""
while [ $# -gt 0 ]; do
	case $1 in
	--messages) MESSAGES=$2; shift 2 ;;
	--senders) SENDERS=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--retention) RETENTION=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) echo "usage: $0 [--messages N] [--senders S] [--rounds R] [--retention T] [--out FILE]" >&2; exit 2 ;;
	esac
done
. "$ROOT/tests/harness/lib.sh"
harness_init bench-cost
harness_redis_start
harness_pg_start "" "shared_preload_libraries = 'chat_outbox,pg_stat_statements'" "pg_stat_statements.track = all" \
	"chat_outbox.retention = '$RETENTION'" "shared_buffers = 256MB" "max_wal_size = 4GB"
q() { psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" "$@"; }
q -c "CREATE EXTENSION pg_stat_statements"
# the outbox's tables: 1.1's one, or 1.2's three generations (written once, truncated by the rotation)
if [ "$(q -c "SELECT to_regclass('consumers.outbox_events') IS NULL")" = t ]; then OUTBOX_TABLES="consumers.outbox"
else OUTBOX_TABLES="consumers.outbox_events_0 consumers.outbox_events_1 consumers.outbox_events_2"; fi
for t in $OUTBOX_TABLES consumers.messages workers.inbox; do q -c "ALTER TABLE $t SET (autovacuum_enabled = off)"; done

export PORT=$(harness_free_port) JWT_SECRET=bench-cost-secret-of-32-bytes-or-more-here
"${CHAT_OUTBOXD:-$ROOT/build/daemon/chat-outboxd}" --service workers --queue chat-messages --listen 127.0.0.1:$PORT \
	--database-url "$PGURL" --redis-url "$REDIS_URL" --jwt-secret "$JWT_SECRET" >"$H_DIR/daemon.log" 2>&1 &
DAEMON_PID=$!
harness_track $DAEMON_PID
harness_wait_for 10 curl -sf http://127.0.0.1:$PORT/healthz
relay_running() { [ "$(q -c "SELECT relay_state FROM chat_outbox.status WHERE service = 'consumers'")" = running ]; }
harness_wait_for 10 relay_running

# CPU seconds (utime + stime [+ reaped children]) of a pid, from /proc/<pid>/stat fields 14-17.
HZ=$(getconf CLK_TCK)
cpu_of() { awk -v hz="$HZ" -v kids="${2:-0}" '{ sub(/^.*\) /, ""); t = $12 + $13; if (kids) t += $14 + $15; printf "%.3f", t / hz }' "/proc/$1/stat"; }
pg_tree_cpu() {
	local pm total kid
	pm=$(head -1 "$PG_DATA/postmaster.pid")
	total=$(cpu_of "$pm" 1)
	for kid in $(pgrep -P "$pm"); do total=$(awk -v a="$total" -v b="$(cpu_of "$kid" 2>/dev/null || echo 0)" 'BEGIN { printf "%.3f", a + b }'); done
	echo "$total"
}
relay_pid() { q -c "SELECT pid FROM pg_stat_activity WHERE backend_type LIKE 'chat_outbox%' ORDER BY pid LIMIT 1"; }
inbox_pid() { q -c "SELECT pid FROM pg_stat_activity WHERE application_name LIKE '%inbox%' ORDER BY pid LIMIT 1"; }
redis_pid() { cat "$REDIS_PIDFILE"; }
# the server's own processes (WAL writer, checkpointer, background writer, launchers), summed
aux_cpu() {
	local pid total=0
	for pid in $(q -c "SELECT pid FROM pg_stat_activity WHERE backend_type IN ('walwriter', 'checkpointer', 'background writer', 'autovacuum launcher', 'logical replication launcher')"); do
		total=$(awk -v a="$total" -v b="$(cpu_of "$pid")" 'BEGIN { printf "%.3f", a + b }')
	done
	echo "$total"
}

cat >"$H_DIR/send.sql" <<'SQL'
\set chat random(1, 1000)
SELECT id FROM consumers.send_message(:chat, 'a message of about sixty bytes, as a chat line often is');
SQL
delivered() { q -c "SELECT count(*) FROM workers.inbox"; }
outbox_rows() { q -c "SELECT count(*) FROM consumers.outbox"; }
unsent_rows() { q -c "SELECT unsent FROM chat_outbox.status WHERE service = 'consumers'"; }

relay_state() { q -c "SELECT relay_state FROM chat_outbox.status WHERE service = 'consumers'"; }
set_relay() {
	q -c "ALTER SYSTEM SET chat_outbox.relay_enabled = $1" -c "SELECT pg_reload_conf()" >/dev/null
	local want=running
	[ "$1" = on ] || want=paused
	in_state() { [ "$(relay_state)" = "$want" ]; }
	harness_wait_for 10 in_state
}
# the client side of a send: pgbench's own CPU (bash's `time` of the child)
TIMEFORMAT='%U %S'
send() { # $1 messages, $2 log name; sets PGB_CPU
	local t
	t=$({ time pgbench -n -M prepared -c "$SENDERS" -j 2 -t $(($1 / SENDERS)) -f "$H_DIR/send.sql" "$PGURL" >"$H_DIR/pgbench-$2.log" 2>&1; } 2>&1) ||
		{ cat "$H_DIR/pgbench-$2.log" >&2; exit 1; }
	PGB_CPU=$(awk '{ printf "%.3f", $1 + $2 }' <<<"$t")
}
# WAL by position, not by pg_stat_wal: a backend's WAL statistics reach the shared counters only when it
# is idle, so they would land in whichever half was running then
wal_bytes() { q -c "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')"; }
reset_stats() { q -c "SELECT pg_stat_statements_reset()" >/dev/null; }
# send_message's own statistics: calls and exec µs per call
send_stats() { q -F ' ' -c "SELECT calls, total_exec_time * 1000 / calls FROM pg_stat_statements WHERE query LIKE '%send_message%' AND toplevel"; }
# the three tables' cumulative row counters (they are not reset: each half reads its own difference)
TABLES="'consumers.messages'::regclass, 'workers.inbox'::regclass$(for t in $OUTBOX_TABLES; do echo -n ", '$t'::regclass"; done)"
table_counts() { q -F '|' -c "SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables WHERE relid IN ($TABLES) ORDER BY schemaname, relname"; }
# the counters reach the shared ones when a backend is idle (within 10 s): wait until the inbox's has all
inbox_counted() { [ "$(q -c "SELECT n_tup_ins FROM pg_stat_user_tables WHERE relid = 'workers.inbox'::regclass")" -ge "$expected" ]; }
add() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a + b }'; }
per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.0f", (b - a) * 1e6 / n }'; } # µs (or bytes / 1e6) per message
rate() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; } # messages per second from $1 to $2
# a half is over when every message is in the inbox and its outbox row purged (retention 1s) or sent
if [ "$RETENTION" = 1s ]; then drained() { [ "$(delivered)" -ge "$expected" ] && [ "$(outbox_rows)" = 0 ]; }
else drained() { [ "$(delivered)" -ge "$expected" ] && [ "$(unsent_rows)" = 0 ]; }; fi
vacuum() { for t in $OUTBOX_TABLES consumers.messages workers.inbox; do q -c "VACUUM $t"; done; }

report=$H_DIR/report.md
summary=$H_DIR/summary.tsv
: >"$summary"
{
	echo "# bench/cost/run.sh --messages $MESSAGES --senders $SENDERS --rounds $ROUNDS --retention $RETENTION"
	echo
	echo "commit \`$(git -C "$ROOT" rev-parse --short HEAD)\`, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(psql --version | awk '{print $3}'), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$report"

# Each round has two halves on the same servers, one after the other: raw (relay_enabled = off: what
# send_message alone costs; the rows are then relayed and purged before the next half, outside the
# measurement) and end to end (the relay on, the same sends, until all are in the inbox and purged, then
# the vacuum they left). Round 0 warms caches and plans and is not reported.
n=$((MESSAGES / SENDERS * SENDERS))
expected=0
for round in $(seq 0 "$ROUNDS"); do
	m=$n
	[ "$round" = 0 ] && m=$(((n / 10) / SENDERS * SENDERS))
	# --- raw
	set_relay off
	reset_stats
	pg0=$(pg_tree_cpu) w0=$(wal_bytes) raw_t0=$(date +%s.%N)
	send "$m" "raw-$round"
	raw_t1=$(date +%s.%N)
	raw_pgb=$PGB_CPU
	pg1=$(pg_tree_cpu) w1=$(wal_bytes)
	read -r raw_calls raw_exec <<<"$(send_stats)"
	raw_pg=$(per "$pg0" "$pg1" "$m") raw_wal=$(awk -v a="$w0" -v b="$w1" -v n="$m" 'BEGIN { printf "%.0f", (b - a) / n }')
	expected=$((expected + m))
	set_relay on
	harness_wait_for 600 drained
	vacuum
	harness_wait_for 30 inbox_counted
	# --- end to end
	reset_stats
	table_counts >"$H_DIR/tables-before-$round"
	rp=$(relay_pid) ip=$(inbox_pid) xp=$(redis_pid)
	[ -n "$rp" ] && [ -n "$ip" ] || { echo "no relay ($rp) or inbox connection ($ip)" >&2; exit 1; }
	t0=$(date +%s.%N)
	read -r pg0 r0 i0 a0 d0 x0 <<<"$(pg_tree_cpu) $(cpu_of "$rp") $(cpu_of "$ip") $(aux_cpu) $(cpu_of $DAEMON_PID) $(cpu_of "$xp")"
	w0=$(wal_bytes)
	send "$m" "e2e-$round"
	e2e_pgb=$PGB_CPU
	t_sent=$(date +%s.%N)
	expected=$((expected + m))
	all_delivered() { [ "$(delivered)" -ge "$expected" ]; }
	harness_wait_for 600 all_delivered
	t_done=$(date +%s.%N)
	harness_wait_for 120 drained
	read -r pg1 r1 i1 a1 d1 x1 <<<"$(pg_tree_cpu) $(cpu_of "$rp") $(cpu_of "$ip") $(aux_cpu) $(cpu_of $DAEMON_PID) $(cpu_of "$xp")"
	w1=$(wal_bytes)
	read -r e2e_calls e2e_exec <<<"$(send_stats)"
	harness_wait_for 30 inbox_counted
	table_counts >"$H_DIR/tables-after-$round"
	q -F '|' -c "SELECT calls, total_exec_time, wal_bytes, rows, shared_blks_hit + shared_blks_read, shared_blks_dirtied,
		CASE WHEN toplevel THEN '' ELSE '(inside) ' END || regexp_replace(left(query, 90), '\s+', ' ', 'g')
		FROM pg_stat_statements WHERE query !~ 'pg_stat|count\(\*\)|pg_stat_statements_reset|relay_state' ORDER BY total_exec_time DESC LIMIT 12" >"$H_DIR/statements-$round"
	# the vacuum the half left: one backend, so its CPU is the tree's growth while it runs
	v_wal0=$(wal_bytes) v_pg0=$(pg_tree_cpu)
	vacuum
	v_wal1=$(wal_bytes) v_pg1=$(pg_tree_cpu)
	[ "$round" = 0 ] && continue

	wbytes=$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.0f", b - a }')
	e2e_pg=$(per "$pg0" "$(add "$pg1" "$(add "$v_pg1" "-$v_pg0")")" "$m")
	e2e_wal=$(awk -v b="$wbytes" -v v0="$v_wal0" -v v1="$v_wal1" -v n="$m" 'BEGIN { printf "%.0f", (b + v1 - v0) / n }')
	senders_us=$(awk -v p0="$pg0" -v p1="$pg1" -v r0="$r0" -v r1="$r1" -v i0="$i0" -v i1="$i1" -v a0="$a0" -v a1="$a1" -v n="$m" \
		'BEGIN { printf "%.0f", ((p1 - p0) - (r1 - r0) - (i1 - i0) - (a1 - a0)) * 1e6 / n }')
	raw_machine=$(awk -v pg="$raw_pg" -v c="$raw_pgb" -v n="$m" 'BEGIN { printf "%.0f", pg + c * 1e6 / n }')
	e2e_machine=$(awk -v pg="$e2e_pg" -v c="$e2e_pgb" -v d0="$d0" -v d1="$d1" -v x0="$x0" -v x1="$x1" -v n="$m" \
		'BEGIN { printf "%.0f", pg + (c + d1 - d0 + x1 - x0) * 1e6 / n }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$raw_pg" "$e2e_pg" "$raw_machine" "$e2e_machine" "$raw_wal" "$e2e_wal" \
		"$(rate "$t0" "$t_sent" "$m")" "$(rate "$raw_t0" "$raw_t1" "$m")" "$(rate "$t0" "$t_done" "$m")" >>"$summary"
	{
		echo
		echo "## round $round: $m messages each half"
		echo
		awk -v a="$t0" -v b="$t_sent" -v c="$t_done" -v n="$m" 'BEGIN { printf "End to end: sent in %.1f s (%.0f msg/s), all in the inbox %.2f s after the last send.\n", b - a, n / (b - a), c - b }'
		echo
		echo "| per message | raw send | end to end |"
		echo "|---|---|---|"
		echo "| whole machine CPU: Postgres, pgbench, chat-outboxd, redis-server (µs) | $raw_machine | $e2e_machine |"
		echo "| Postgres CPU, all processes, with the vacuum left behind (µs) | $raw_pg | $e2e_pg |"
		echo "| - relay worker (µs) | | $(per "$r0" "$r1" "$m") |"
		echo "| - daemon's inbox connection (µs) | | $(per "$i0" "$i1" "$m") |"
		echo "| - WAL writer, checkpointer, background writer, launchers (µs) | | $(per "$a0" "$a1" "$m") |"
		echo "| - the senders' backends (the rest) (µs) | | $senders_us |"
		echo "| - the vacuum afterwards (µs) | | $(per "$v_pg0" "$v_pg1" "$m") |"
		echo "| pgbench (the clients) (µs) | $(per 0 "$raw_pgb" "$m") | $(per 0 "$e2e_pgb" "$m") |"
		echo "| chat-outboxd CPU (µs) | | $(per "$d0" "$d1" "$m") |"
		echo "| redis-server CPU (µs) | | $(per "$x0" "$x1" "$m") |"
		echo "| WAL bytes, with the vacuum's | $raw_wal | $e2e_wal |"
		awk -v n="$m" -v v0="$v_wal0" -v v1="$v_wal1" 'BEGIN { printf "| - WAL bytes of the vacuum | | %.0f |\n", (v1 - v0) / n }'
		awk -v a="$raw_exec" -v b="$e2e_exec" 'BEGIN { printf "| send_message execution, in its backend (µs) | %.1f | %.1f |\n", a, b }'
		echo
		echo "| table (end to end, per message) | inserted | updated (HOT) | deleted |"
		echo "|---|---|---|---|"
		paste -d'|' "$H_DIR/tables-before-$round" "$H_DIR/tables-after-$round" |
			awk -F'|' -v n="$m" '{ printf "| %s | %.2f | %.2f (%.2f) | %.2f |\n", $1, ($7 - $2) / n, ($8 - $3) / n, ($9 - $4) / n, ($10 - $5) / n }'
		echo
		echo "| calls | rows | exec µs | WAL bytes | buffers | dirtied | statement (end to end, all per message) |"
		echo "|---|---|---|---|---|---|---|"
		while IFS='|' read -r calls ms wal rows bufs dirt query; do
			awk -v c="$calls" -v ms="$ms" -v w="$wal" -v r="$rows" -v b="$bufs" -v d="$dirt" -v n="$m" -v qy="$query" \
				'BEGIN { gsub(/\|/, "\\|", qy); printf "| %.3f | %.2f | %.1f | %.0f | %.1f | %.2f | `%s` |\n", c / n, r / n, ms * 1000 / n, w / n, b / n, d / n, qy }'
		done <"$H_DIR/statements-$round"
	} >>"$report"
done

# the rounds side by side: median and range of each figure, and the ratios the issue's targets use
{
	echo
	echo "## all rounds: median (min-max)"
	echo
	echo "| per message | raw send | end to end | ratio |"
	echo "|---|---|---|---|"
	awk -F'\t' '
		function sorted(v, k,   i, j, t) { for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t } }
		function middle(v, k) { sorted(v, k); return (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
		function med(col,   i, v) { for (i = 1; i <= NR; i++) v[i] = a[i, col]; return middle(v, NR) }
		function lo(col,   i, m) { m = a[1, col]; for (i = 2; i <= NR; i++) if (a[i, col] < m) m = a[i, col]; return m }
		function hi(col,   i, m) { m = a[1, col]; for (i = 2; i <= NR; i++) if (a[i, col] > m) m = a[i, col]; return m }
		function ratio(x, y,   i, v) { for (i = 1; i <= NR; i++) v[i] = a[i, y] / a[i, x]; return middle(v, NR) }
		{ for (c = 1; c <= NF; c++) a[NR, c] = $c }
		END {
			printf "| whole machine CPU (µs) | %d (%d-%d) | %d (%d-%d) | %.2f |\n", med(3), lo(3), hi(3), med(4), lo(4), hi(4), ratio(3, 4)
			printf "| Postgres CPU (µs) | %d (%d-%d) | %d (%d-%d) | %.2f |\n", med(1), lo(1), hi(1), med(2), lo(2), hi(2), ratio(1, 2)
			printf "| WAL bytes | %d (%d-%d) | %d (%d-%d) | %.2f |\n", med(5), lo(5), hi(5), med(6), lo(6), hi(6), ratio(5, 6)
			printf "| send rate (msg/s; end to end: sends committed while the relay runs) | %d (%d-%d) | %d (%d-%d) | %.2f |\n", med(8), lo(8), hi(8), med(7), lo(7), hi(7), ratio(8, 7)
			printf "| delivered rate (msg/s; end to end: first send to the last in the inbox) | %d (%d-%d) | %d (%d-%d) | %.2f |\n", med(8), lo(8), hi(8), med(9), lo(9), hi(9), ratio(8, 9)
		}' "$summary"
	echo
	echo "The ratio is the median of the rounds' own ratios (each round's halves ran back to back)."
} >>"$report"
cat "$report"
[ -z "$OUT" ] || cp "$report" "$OUT"
