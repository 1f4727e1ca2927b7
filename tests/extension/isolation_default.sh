#!/usr/bin/env bash
# tests/extension/isolation_default.sh - the in-database relay relays whatever isolation level the
# server makes the default: a pass's ticks need READ COMMITTED (each a snapshot of its own), and the
# worker forces it for its own transactions, as it forces synchronous_commit (1.5 failed every pass
# with "relay_batch needs READ COMMITTED" while chat_outbox.status said `running`). The server's
# default_transaction_isolation is serializable, the database's repeatable read; the senders send
# under those. Checks: every message reaches Redis as a job, the status shows no error.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-isolation-default
harness_redis_start
harness_pg_start "" "default_transaction_isolation = 'serializable'"
SUPER_URL=${PG_SUPER_URL:-$PGURL}
db=$(harness_psql "SELECT current_database()")
psql -XAtq -v ON_ERROR_STOP=1 "$SUPER_URL" -c "ALTER DATABASE \"$db\" SET default_transaction_isolation = 'repeatable read'"
# the worker connects anew with the database's setting in force too
psql -XAtq -v ON_ERROR_STOP=1 "$SUPER_URL" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'" >/dev/null
[ "$(harness_psql "SHOW default_transaction_isolation")" = "repeatable read" ] || fail "the database's default did not apply"

relay_up() { [ -n "$(psql -XAtq "$SUPER_URL" -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'")" ]; }
harness_wait_for 60 relay_up || fail "the relay did not come back"
n=20
for i in $(seq 1 "$n"); do
	harness_psql "SELECT consumers.send_message($((i % 3)), 'under repeatable read $i')" >/dev/null
done
jobs() { rcli llen bull:chat-messages:wait; }
harness_wait_value 60 -eq "$n" jobs || fail "$(jobs) of $n messages reached Redis; status: $(relay_status "relay_state, service_error, last_error")"
unsent=$(harness_psql "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL")
[ "$unsent" = 0 ] || fail "$unsent rows unsent"
[ -z "$(relay_status service_error)" ] || fail "service_error: $(relay_status service_error)"
[ "$(relay_status relay_state)" = running ] || fail "relay_state: $(relay_status relay_state)"
[ "$(relay_status service_state)" = running ] || fail "service_state: $(relay_status service_state)"
echo "ok: $n of $n messages relayed under a default of repeatable read (server: serializable)"
