#!/usr/bin/env bash
# bench/managed/notify_cost.sh [seconds] - what the managed install's wake-up (a NOTIFY at commit)
# costs concurrent senders: pgbench send_message() rates with 1, 8 and 32 clients, with the outbox
# trigger enabled and disabled, on a managed install (no relay running: the outbox just grows).
# Prints one line per run. A benchmark, not a test: the figures depend on the machine.
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
SECONDS_PER_RUN=${1:-10}
harness_init bench-notify-cost
HARNESS_PG_MANAGED=1 harness_pg_start "" "synchronous_commit = on"
echo "SELECT consumers.send_message(1 + :client_id % 10, 'benchmark message');" >"$H_DIR/send.sql"
run() { # run <trigger on|off> <clients>
	if [ "$1" = on ]; then harness_psql "ALTER TABLE consumers.outbox ENABLE TRIGGER wake_relay"
	else harness_psql "ALTER TABLE consumers.outbox DISABLE TRIGGER wake_relay"; fi
	tps=$(pgbench -n -f "$H_DIR/send.sql" -c "$2" -j "$(( $2 < 4 ? $2 : 4 ))" -T "$SECONDS_PER_RUN" "$PGURL" 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p')
	printf 'notify %-3s clients %2d  %8.0f sends/s\n' "$1" "$2" "$tps"
}
# a session LISTENs on the channel throughout, as the relay would (without one, Postgres still
# queues every notification until no session could want it)
( echo "LISTEN chat_outbox_relay;"; while sleep 1; do echo "SELECT 1;"; done ) | psql -Xq "$PGURL" >/dev/null 2>&1 &
harness_track $!
for clients in 1 8 32; do
	run on "$clients"
	run off "$clients"
done
