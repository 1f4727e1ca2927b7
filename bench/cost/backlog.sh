#!/usr/bin/env bash
# bench/cost/backlog.sh - the rotation beside a backlog of unsent rows (extension mode): a rotation step's
# time does not grow with the backlog (it reads the cursors, never the rows), the backlog drains, and the
# generations are truncated after it.
#
#   bench/cost/backlog.sh [--rows N]      (default 1000000)
#
# The relay is paused while N rows are sent (send_message in statements of 10,000), so they all wait in one
# generation; rotation steps are timed with the backlog (by SQL, as the relay runs them), then the relay
# resumes (chat_outbox.retention = 1s) and the drain and the truncates are timed. Figures are printed,
# never asserted: the machine's load moves them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROWS=1000000
while [ $# -gt 0 ]; do
	case $1 in
	--rows) ROWS=$2; shift 2 ;;
	*) echo "usage: $0 [--rows N]" >&2; exit 2 ;;
	esac
done
. "$ROOT/tests/harness/lib.sh"
harness_init bench-backlog
harness_redis_start
harness_pg_start "" "chat_outbox.retention = '1s'" "chat_outbox.relay_enabled = off" "shared_buffers = 256MB" "max_wal_size = 4GB"
ms() { date +%s%3N; }
step_ms() { # one rotation step, as the relay runs it (retention 0: no switch, only the truncate's check), timed inside the server
	psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "DO \$\$ DECLARE t timestamptz := clock_timestamp(); BEGIN
		PERFORM chat_outbox.outbox_rotate('consumers', 0);
		RAISE NOTICE 'ms %', round((extract(epoch FROM clock_timestamp() - t) * 1000)::numeric, 2); END \$\$" 2>&1 | sed -n 's/.*ms //p'
}
echo "rotation step, empty outbox: $(step_ms) ms"
t0=$(ms)
for ((n = 0; n < ROWS; n += 10000)); do
	q "SELECT count(consumers.send_message(g % 1000, 'backlog')) FROM generate_series(1, least(10000, $ROWS - $n)) g" >/dev/null
done
echo "sent $ROWS rows (relay paused) in $(($(ms) - t0)) ms"
echo "rotation step with $ROWS unsent rows: $(step_ms) ms, $(step_ms) ms, $(step_ms) ms"
status_ms=$(psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "DO \$\$ DECLARE t timestamptz := clock_timestamp(); BEGIN
	PERFORM unsent FROM chat_outbox.status WHERE service = 'consumers';
	RAISE NOTICE 'ms %', round((extract(epoch FROM clock_timestamp() - t) * 1000)::numeric, 2); END \$\$" 2>&1 | sed -n 's/.*ms //p')
echo "chat_outbox.status with the backlog: $status_ms ms (it counts the unsent rows)"
q "ALTER SYSTEM SET chat_outbox.relay_enabled = on" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
t0=$(ms)
unsent() { q "SELECT count(*) FROM consumers.outbox_events" >/dev/null; [ "$(rcli LLEN bull:chat-messages:wait)" -ge "$ROWS" ]; }
harness_wait_for 3600 unsent
drain=$(($(ms) - t0))
echo "drained $ROWS rows into Redis in $drain ms ($((ROWS * 1000 / (drain + 1))) rows/s), truncates so far: $(q "SELECT truncated FROM chat_outbox.outbox_rotation WHERE service = 'consumers'")"
t0=$(ms)
empty() { [ "$(q "SELECT count(*) FROM consumers.outbox_events")" = 0 ]; }
harness_wait_for 120 empty
echo "outbox empty (the backlog's generation truncated) $(($(ms) - t0)) ms after the drain; truncates: $(q "SELECT truncated FROM chat_outbox.outbox_rotation WHERE service = 'consumers'")"
echo "outbox tables: $(q "SELECT string_agg(relname || ' ' || pg_size_pretty(pg_total_relation_size(relid)) || ' dead ' || n_dead_tup, ', ' ORDER BY relname) FROM pg_stat_user_tables WHERE schemaname = 'consumers' AND relname LIKE 'outbox_events%'")"
