#!/usr/bin/env bash
# bench/inbox/run.sh - what the receiving daemon's inbox write costs per message, for one or more
# chat-outboxd binaries side by side on the same servers (before and after a change), and what the
# relay's inbox purge and the vacuum it leaves cost afterwards. Not a test: it prints figures.
#
#   bench/inbox/run.sh [--messages N] [--rounds R] [--batch-sizes "100 10"] [--reset purge|truncate] [--out FILE]
#                      [--daemon LABEL=PATH]...   (default: this build's chat-outboxd, labelled "this")
#   INBOX_SQL_<LABEL>=file.sql   SQL run (as the owner) before each of that daemon's halves, and
#                                INBOX_SQL_RESET=file.sql before every other's: a schema change measured
#                                beside the schema it replaces, in the same run
#
# One half = one daemon binary and one batch size: N messages wait in Redis (sent by send_message over
# 1,000 chats and relayed with no daemon running), then the daemon starts and drains them into
# workers.inbox. Measured over the drain: the CPU of the daemon's inbox connection (its backend, from
# /proc), WAL by insert position (nothing else writes meanwhile: the relay has nothing to send, the
# purge is off), pg_stat_statements (track = all: the statements inside the inbox_apply trigger are
# rows of their own) and pg_stat_user_functions (the trigger's own time), the drain's wall time and the
# daemon's CPU. Then, with --reset purge (the default), the purge: chat_outbox.inbox_retention = 1s until the
# relay has deleted every row (the relay worker's CPU and the WAL), then VACUUM of the inbox (its CPU and WAL);
# that leaves the same empty table for the next half: one vacuumed while empty, as a quiet service's is after
# its purge. With --reset truncate, TRUNCATE instead (the purge is not measured): an inbox the planner has never
# seen vacuumed, as a new one is. A CHECKPOINT before each half gives each the same full-page writes.
# Halves alternate between the binaries within a round, so a machine whose load drifts shifts all alike.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MESSAGES=20000 ROUNDS=3 BATCHES="100 10" RESET=purge OUT="" DAEMONS=()
while [ $# -gt 0 ]; do
	case $1 in
	--messages) MESSAGES=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--batch-sizes) BATCHES=$2; shift 2 ;;
	--daemon) DAEMONS+=("$2"); shift 2 ;;
	--reset) RESET=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) echo "usage: $0 [--messages N] [--rounds R] [--batch-sizes \"100 10\"] [--reset purge|truncate] [--daemon LABEL=PATH]... [--out FILE]" >&2; exit 2 ;;
	esac
done
case $RESET in purge | truncate) ;; *) echo "--reset purge or truncate" >&2; exit 2 ;; esac
[ ${#DAEMONS[@]} -gt 0 ] || DAEMONS=("this=$ROOT/build/daemon/chat-outboxd")
. "$ROOT/tests/harness/lib.sh"
. "$ROOT/bench/lib/ticks.sh"
harness_init bench-inbox
harness_redis_start
harness_pg_start "" "shared_preload_libraries = 'chat_outbox,pg_stat_statements'" "pg_stat_statements.track = all" \
	"track_functions = 'pl'" "shared_buffers = 256MB" "max_wal_size = 4GB" "chat_outbox.inbox_retention = 0"
daemon_export_settings
sql() { psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" "$@"; }
sql -c "CREATE EXTENSION pg_stat_statements"
sql -c "ALTER TABLE workers.inbox SET (autovacuum_enabled = off)"
HZ=$(getconf CLK_TCK)
setting() { sql -c "ALTER SYSTEM SET $1 = '$2'" -c "SELECT pg_reload_conf()" >/dev/null; }
inbox_rows() { sql -c "SELECT count(*) FROM workers.inbox"; }
unsent() { sql -c "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL"; }
wal_bytes() { sql -c "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')"; }
inbox_pid() { sql -c "SELECT pid FROM pg_stat_activity WHERE application_name LIKE '%inbox%' ORDER BY pid LIMIT 1"; }
relay_pid() { sql -c "SELECT pid FROM pg_stat_activity WHERE backend_type LIKE 'chat_outbox%' ORDER BY pid LIMIT 1"; }
pg_tree_ticks() { # the postmaster, its reaped children and its live children
	local pm total kid
	pm=$(head -1 "$PG_DATA/postmaster.pid")
	total=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$pm/stat")
	for kid in $(pgrep -P "$pm"); do total=$((total + $(ticks_or_0 "$kid"))); done
	echo "$total"
}
us() { awk -v t="$1" -v n="$2" -v hz="$HZ" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }'; } # ticks -> µs per message
run_sql_for() { # the schema a daemon's half runs on
	local var="INBOX_SQL_$1" file
	file=${!var:-${INBOX_SQL_RESET:-}}
	[ -z "$file" ] || sql -f "$file" >/dev/null
}

n=$MESSAGES
report=$H_DIR/report.md summary=$H_DIR/summary.tsv
: >"$summary"
{
	echo "# bench/inbox/run.sh --messages $MESSAGES --rounds $ROUNDS --batch-sizes \"$BATCHES\" --reset $RESET"
	echo
	echo "commit \`$(git -C "$ROOT" rev-parse --short HEAD)\`, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(psql --version | awk '{print $3}'), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	for d in "${DAEMONS[@]}"; do echo "- \`${d%%=*}\`: ${d#*=} (md5 $(md5sum "${d#*=}" | cut -c1-12))"; done
} >"$report"

# half <label> <binary> <batch size> <round>: appends one line to the summary
half() {
	local label=$1 bin=$2 batch=$3 round=$4 log t0 t1 w0 w1 ip ipt dpid dt rp r0 r1 pw0 pw1 v0 v1 vw0 vw1 stats fn
	run_sql_for "$label"
	# N jobs wait in Redis: sent in one transaction, relayed with no daemon running
	sql -c "SELECT count(consumers.send_message(1 + (g * 7919) % 1000, 'a message of about sixty bytes, as a chat line often is')) FROM generate_series(1, $n) g" >/dev/null
	harness_wait_value 300 -eq 0 unsent
	sql -c "CHECKPOINT"
	sql -c "SELECT pg_stat_statements_reset()" -c "SELECT pg_stat_reset()" >/dev/null
	log=daemon-$label-$batch-$round.log
	w0=$(wal_bytes) t0=$(date +%s.%N)
	CHAT_OUTBOXD=$bin daemon_start "$log" --service workers --queue chat-messages --batch-size "$batch" --log-level notice
	dpid=$DAEMON_PID
	harness_wait_value 300 -ge "$n" inbox_rows
	t1=$(date +%s.%N) w1=$(wal_bytes)
	ip=$(inbox_pid)
	ipt=$(ticks "$ip") dt=$(ticks "$dpid")
	stats=$(sql -F '|' -c "SELECT coalesce(sum(calls), 0), coalesce(sum(total_exec_time), 0), coalesce(sum(rows), 0), coalesce(sum(wal_bytes), 0)
		FROM pg_stat_statements WHERE toplevel AND query ~* 'inbox|advisory_xact_lock|set_config|^(BEGIN|COMMIT)' AND query !~* 'count\(\*\)|max\(seq\)|pg_stat'")
	sql -c "SELECT calls, round(total_exec_time::numeric, 1), rows, wal_bytes, toplevel, left(regexp_replace(query, '\s+', ' ', 'g'), 100)
		FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 10" >"$H_DIR/statements-$label-$batch-$round"
	daemon_stop || true
	# a backend reports its function statistics when it is idle or exits
	harness_wait_value 30 = "" inbox_pid
	fn=$(sql -F '|' -c "SELECT coalesce(sum(calls), 0), coalesce(sum(self_time), 0) FROM pg_stat_user_functions WHERE funcname = 'inbox_apply'")
	if [ "$RESET" = purge ]; then # the relay purges what the half wrote, then the vacuum it leaves
		rp=$(relay_pid) r0=$(ticks "$rp") pw0=$(wal_bytes)
		setting chat_outbox.inbox_retention 1s
		harness_wait_value 300 -eq 0 inbox_rows
		setting chat_outbox.inbox_retention 0
		r1=$(ticks "$rp") pw1=$(wal_bytes)
		v0=$(pg_tree_ticks) vw0=$(wal_bytes)
		sql -c "VACUUM workers.inbox"
		v1=$(pg_tree_ticks) vw1=$(wal_bytes)
	else
		sql -c "TRUNCATE workers.inbox"
		r0=0 r1=0 pw0=0 pw1=0 v0=0 v1=0 vw0=0 vw1=0
	fi
	IFS='|' read -r calls ms rows wal <<<"$stats"
	IFS='|' read -r fcalls fms <<<"$fn"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$batch" "$round" \
		"$(us "$ipt" "$n")" \
		"$(awk -v w0="$w0" -v w1="$w1" -v n="$n" 'BEGIN { printf "%.0f", (w1 - w0) / n }')" \
		"$(awk -v ms="$ms" -v n="$n" 'BEGIN { printf "%.1f", ms * 1000 / n }')" \
		"$(awk -v c="$calls" -v n="$n" -v b="$batch" 'BEGIN { printf "%.2f", c / (n / b) }')" \
		"$(awk -v ms="$fms" -v n="$n" 'BEGIN { printf "%.1f", ms * 1000 / n }')" \
		"$(awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "%.0f", n / (b - a) }')" \
		"$(us "$dt" "$n")" \
		"$(us $((r1 - r0)) "$n")" \
		"$(awk -v w0="$pw0" -v w1="$pw1" -v n="$n" 'BEGIN { printf "%.0f", (w1 - w0) / n }')" \
		"$(us $((v1 - v0)) "$n")" \
		"$(awk -v w0="$vw0" -v w1="$vw1" -v n="$n" 'BEGIN { printf "%.0f", (w1 - w0) / n }')" >>"$summary"
	echo "$(date -u +%T) round $round batch $batch $label: $(tail -1 "$summary")" >&2
}

# round 0 warms caches and plans with a tenth of the messages and is not reported
for round in $(seq 0 "$ROUNDS"); do
	for batch in $BATCHES; do
		for d in "${DAEMONS[@]}"; do
			if [ "$round" = 0 ]; then
				n=$((MESSAGES / 10)) half "${d%%=*}" "${d#*=}" "$batch" 0
				sed -i '$d' "$summary"
			else
				n=$MESSAGES half "${d%%=*}" "${d#*=}" "$batch" "$round"
			fi
		done
	done
done

{
	echo
	echo "Median (min-max) over $ROUNDS rounds of $MESSAGES messages, per message unless said:"
	echo
	echo "| daemon | batch | inbox connection's backend CPU (µs) | WAL of the write (bytes) | statements' exec (µs) | statements per batch | inbox_apply self (µs) | drain (msg/s) | chat-outboxd CPU (µs) | purge: relay CPU (µs) | purge WAL (bytes) | VACUUM CPU (µs) | VACUUM WAL (bytes) |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for batch in $BATCHES; do
		for d in "${DAEMONS[@]}"; do
			awk -F'\t' -v l="${d%%=*}" -v b="$batch" '
				function sorted(v, k,   i, j, t) { for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t } }
				$1 == l && $2 == b { k++; for (c = 4; c <= NF; c++) a[c, k] = $c; nf = NF }
				END {
					printf "| %s | %s |", l, b
					for (c = 4; c <= nf; c++) {
						for (i = 1; i <= k; i++) v[i] = a[c, i]
						sorted(v, k)
						m = (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
						printf " %s (%s-%s) |", m, v[1], v[k]
					}
					printf "\n"
				}' "$summary"
		done
	done
	echo
	echo "Each round ran every daemon's half back to back, alternating; the statements are the write's (the planner settings,"
	echo "the lock, the insert, BEGIN/COMMIT), the trigger's own statements excluded (they are inside the insert's time)."
} >>"$report"
cat "$report"
[ -z "$OUT" ] || cp "$report" "$OUT"
