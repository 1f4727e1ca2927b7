#!/usr/bin/env bash
# bench/scale/inbox_lock.sh - how long the consumers' inbox write holds the service's inbox advisory lock
# (chat_outbox.inbox:<service>), per message, with 1, 2 and 4 consumers on 4 partitions (docs/journal/scale.md,
# "Remaining serialization points"). Not a test.
#
# Each round: BACKLOG messages over 100 chats wait in the outbox (relay paused), CONSUMERS chat-outboxd of service
# workers start and share the 4 partitions by leases, then the relay is turned on and the backlog drains through
# Redis into workers.inbox. Meanwhile Postgres logs every statement with its duration (log_min_duration_statement
# = 0; the harness's log_line_prefix '%m [%p] %b '); for each inbox transaction of a daemon's connection the script reads
#   wait: the lock statement's duration (the time it queued behind other consumers),
#   hold: from the lock statement's end (the lock granted) to the COMMIT's end (the lock released), i.e. the
#         insert, the commit (its WAL flush) and the two round trips to the daemon between the three statements;
#         for a daemon that sends its write as one pipeline (no COMMIT statement: the commit is at the pipeline's
#         Sync, which Postgres does not log), to the insert's end, so the commit's own time is left out.
# The log's timestamps have millisecond resolution; over thousands of transactions the mean is exact to well under
# that. Logging every statement adds a little to each. Prints per round: messages/s, transactions, messages per
# transaction, mean hold per transaction and per message, the fraction of the drain the lock was held, mean wait,
# the server-side time of the insert and the COMMIT inside the hold, and the daemons' CPU per message.
# Env: BACKLOG (40000), CONSUMERS ("1 2 4").
# Run from a clone after scripts/setup.sh (it builds the daemon and installs the extension): bash bench/scale/inbox_lock.sh
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
. "$(dirname "$0")/../lib/ticks.sh"
BACKLOG=${BACKLOG:-40000} CONSUMERS=${CONSUMERS:-"1 2 4"}
daemon_env bench-inbox-lock
setting() { q "ALTER SYSTEM SET $1 = '$2'" && q "SELECT pg_reload_conf()" >/dev/null; }
Q=chat-messages
lease() { local v; v=$(rcli GET "bull:$Q-p$1:lease"); echo "${v%#*}"; } # its identity (<identity>#<token>)
holders() { for k in 0 1 2 3; do lease $k; done | sort -u | grep -c . || true; }
unowned() { local n=0 k; for k in 0 1 2 3; do [ -n "$(lease $k)" ] || n=$((n + 1)); done; echo $n; }

# The layout key is written by the relay with its first job under 4 partitions: one message per partition first.
q "SELECT chat_outbox.set_partitions('consumers', 4)" >/dev/null
q "SELECT count(consumers.send_message(g, 'warm-up')) FROM generate_series(1, 4) g" >/dev/null
harness_wait_for 30 sh -c "[ \"\$(redis-cli -p $REDIS_PORT GET bull:$Q:partitions)\" = 4 ]"

echo "# $(date -u +%FT%TZ) $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg); backlog $BACKLOG over 100 chats, 4 partitions, batch 100 (the daemon's default)"
printf '%-9s %8s %6s %8s %12s %11s %9s %10s %12s %13s %11s\n' consumers msgs/s txns msgs/txn hold_ms/txn hold_us/msg held_% wait_ms/txn insert_ms/txn commit_ms/txn cpu_us/msg
for k in $CONSUMERS; do
	setting chat_outbox.relay_enabled off
	q "SELECT count(consumers.send_message(1 + g % 100, 'lock ' || g)) FROM generate_series(1, $BACKLOG) g" >/dev/null
	pids=()
	for i in $(seq 1 "$k"); do
		daemon_start "c$k-$i.log" --service workers --queue $Q --identity "c$i" --log-level notice
		pids+=("$DAEMON_PID")
	done
	# every consumer holds its share before the backlog moves
	harness_wait_value 60 -eq "$k" holders
	harness_wait_value 60 -eq 0 unowned
	seq0=$(q "SELECT coalesce(max(seq), 0) FROM workers.inbox")
	cpu0=0; for p in "${pids[@]}"; do cpu0=$((cpu0 + $(ticks "$p"))); done
	offset=$(stat -c %s "$H_DIR/postgres.log")
	setting log_min_duration_statement 0
	setting chat_outbox.relay_enabled on
	harness_wait_for 300 sh -c "[ \"\$(psql -XAtq '$PGURL' -c 'SELECT count(*) FROM workers.inbox WHERE seq > $seq0')\" -ge $BACKLOG ]"
	setting log_min_duration_statement -1
	cpu1=0; for p in "${pids[@]}"; do cpu1=$((cpu1 + $(ticks "$p"))); done
	wall=$(q "SELECT extract(epoch FROM max(received_at) - min(received_at)) FROM workers.inbox WHERE seq > $seq0")
	tail -c +"$((offset + 1))" "$H_DIR/postgres.log" | awk -v k="$k" -v n="$BACKLOG" -v wall="$wall" \
		-v cpu="$((cpu1 - cpu0))" -v hz="$(getconf CLK_TCK)" '
		function t(hms,  a) { split(hms, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
		/ duration: / {
			pid = $4; ts = t($2)
			d = $0; sub(/.* duration: /, "", d); d += 0
			if ($0 ~ /execute chat_outboxd_inbox_lock:/) { granted[pid] = ts; waited += d; next }
			if (!(pid in granted)) next
			if ($0 ~ /execute chat_outboxd_inbox_insert:/) { ins += d; ins_hold += ts - granted[pid]; ins_txns++; next }
			if ($0 ~ /execute [^:]*: COMMIT$/) { hold += ts - granted[pid]; com += d; txns++; delete granted[pid] }
		}
		END {
			# a pipelined write commits at its Sync, which is not a logged statement: its hold ends with the insert
			if (!txns && ins_txns) { hold = ins_hold; txns = ins_txns; print "pipelined writes: hold to the end of the insert, the commit not logged" > "/dev/stderr" }
			if (!txns) { print "no inbox transactions in the log" > "/dev/stderr"; exit 1 }
			printf "%-9d %8.0f %6d %8.1f %12.3f %11.2f %9.1f %10.3f %12.3f %13.3f %11.1f\n", k, n / wall, txns, n / txns,
				hold * 1000 / txns, hold * 1e6 / n, 100 * hold / wall, waited / txns, ins / txns, com / txns, cpu / hz * 1e6 / n
		}'
	daemons_stop "${pids[@]}"
done
