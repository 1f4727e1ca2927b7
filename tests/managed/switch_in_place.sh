#!/usr/bin/env bash
# tests/managed/switch_in_place.sh - switching one database between the modes in place, both ways,
# while a sender goes on sending (docs/managed.md, Switching modes):
#   1. extension -> managed install: sql/managed/from_extension.sql, chat-outbox-relay started, the
#      in-database relay turned off. The schema is then what a fresh managed install makes.
#   2. managed install -> extension: the in-database relay turned on, CREATE EXTENSION chat_outbox
#      VERSION 'managed' and ALTER EXTENSION chat_outbox UPDATE TO '<current version>' in one transaction,
#      chat-outbox-relay stopped, the managed install's own tables dropped. The schema is then what
#      a fresh CREATE EXTENSION makes.
# No send fails during either switch.
# A real bullmq Worker records every processed job and every `duplicated` event: at the end every
# stored message was processed exactly once, in outbox order, and no job was added twice.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init managed-switch-in-place
harness_redis_start
harness_pg_start
export REDIS_URL PGURL
HERE=$H_ROOT/tests/extension
PROCESSED=$H_DIR/processed.txt
DUPLICATED=$H_DIR/duplicated.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"
. "$HERE/delivery.sh"
super_db() { psql -XAtq -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$PG_PORT/$1" "${@:2}"; }
set_relay_enabled() {
	harness_psql "ALTER SYSTEM SET chat_outbox.relay_enabled = $1"
	harness_psql "SELECT pg_reload_conf()" >/dev/null
}
# what defines the install: functions (with their ACLs), columns, indexes, triggers, the view,
# extension members and what pg_dump dumps of them
SCHEMA_SQL="SELECT string_agg(x, E'\n' ORDER BY x) FROM (
	SELECT 'function ' || p.oid::regprocedure || ' ' || md5(pg_get_functiondef(p.oid)) || ' ' || coalesce(p.proacl::text, '')
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname IN ('chat_outbox', 'consumers', 'workers')
	UNION ALL SELECT 'column ' || table_schema || '.' || table_name || '.' || column_name || ' ' || data_type || ' ' ||
		coalesce(column_default, '') || ' ' || is_nullable || ' ' || is_identity
		FROM information_schema.columns WHERE table_schema IN ('chat_outbox', 'consumers', 'workers')
	UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname IN ('chat_outbox', 'consumers', 'workers')
	UNION ALL SELECT 'trigger ' || tgrelid::regclass || ' ' || tgname || ' ' || tgfoid::regprocedure || ' ' || tgenabled::text
		FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE NOT tgisinternal AND n.nspname IN ('chat_outbox', 'consumers', 'workers')
	UNION ALL SELECT 'view ' || md5(pg_get_viewdef('chat_outbox.status'::regclass))
	UNION ALL SELECT 'member ' || pg_describe_object(classid, objid, objsubid)
		FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid WHERE d.deptype = 'e' AND e.extname = 'chat_outbox'
	UNION ALL SELECT 'dumped ' || c::regclass || ' ' || coalesce(w, '')
		FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(c, w) WHERE e.extname = 'chat_outbox'
) t(x)"
same_schema_as() { # same_schema_as <what> <fresh database>
	super_db chat -c "$SCHEMA_SQL" >"$H_DIR/schema-inplace.txt"
	super_db "$2" -c "$SCHEMA_SQL" >"$H_DIR/schema-fresh.txt"
	diff -u "$H_DIR/schema-fresh.txt" "$H_DIR/schema-inplace.txt" >"$H_DIR/schema.diff" ||
		{ cat "$H_DIR/schema.diff"; fail "$1: the schema differs from a fresh one (- fresh, + switched in place)"; }
	echo "ok   $1: the schema is a fresh one's ($(wc -l <"$H_DIR/schema-fresh.txt") lines compared)"
}
# the installs to compare with, made fresh by the superuser as in the database switched
super_db postgres -c "CREATE DATABASE fresh_managed" -c "CREATE DATABASE fresh_extension"
super_db fresh_managed -f "$H_ROOT/sql/managed/chat_outbox_managed.sql" >/dev/null
super_db fresh_extension -c "CREATE EXTENSION chat_outbox"

node "$HERE/consume.mjs" "$PROCESSED" "$DUPLICATED" >"$H_DIR/consumer.log" 2>&1 &
harness_track $!
harness_wait_for 20 grep -q ready "$H_DIR/consumer.log"
# the sender sends until told to stop, so "200 more after a switch" is always reached
sender_start inplace 2

# 1. extension -> managed install, senders sending
harness_wait_for 30 sender_acked_at_least 200
super_db chat -f "$H_ROOT/sql/managed/from_extension.sql" >"$H_DIR/from_extension.log" 2>&1 ||
	{ cat "$H_DIR/from_extension.log"; fail "from_extension.sql"; }
relay_start inplace --poll-interval 200
set_relay_enabled off
at=$(sender_acked)
harness_wait_for 30 sender_acked_at_least $((at + 200))
harness_wait_for 30 relayed_up_to "$(harness_psql "SELECT max(id) FROM consumers.outbox")"
echo "ok   extension -> managed install in place: $(stored) stored, chat-outbox-relay relays"
same_schema_as "extension -> managed install" fresh_managed

# 2. managed install -> extension, senders sending
set_relay_enabled on
super_db chat -c "BEGIN" -c "CREATE EXTENSION chat_outbox VERSION 'managed'" -c "ALTER EXTENSION chat_outbox UPDATE TO '$(harness_ext_version)'" -c "COMMIT"
kill -TERM "$RELAY_PID"
wait "$RELAY_PID" || fail "chat-outbox-relay exited $? on SIGTERM"
harness_psql "DROP TABLE chat_outbox.settings, chat_outbox.relays, chat_outbox.relay_progress"
at=$(sender_acked)
harness_wait_for 30 sender_acked_at_least $((at + 200))
harness_wait_value 30 = running relay_status relay_state
echo "ok   managed install -> extension in place: $(stored) stored, the in-database relay relays"
same_schema_as "managed install -> extension" fresh_extension

sender_stop
# no send failed: the sender retries a failed call, and logs it
failed=$(grep -c retrying "$H_DIR/sender-inplace.log" || true)
[ "$failed" -eq 0 ] || fail "$failed sends failed during the switches: $(grep -m3 retrying "$H_DIR/sender-inplace.log")"
echo "ok   no send failed during the switches"
verify_delivered "both switches under traffic"
expect_eq "jobs added twice (duplicated events)" 0 "$(wc -l <"$DUPLICATED")"
harness_psql "SELECT payload ->> 'id' FROM consumers.outbox ORDER BY id" >"$H_DIR/outbox-order.txt"
awk '!seen[$0]++' "$PROCESSED" | diff -q "$H_DIR/outbox-order.txt" - >/dev/null || fail "processed out of outbox order"
echo "ok   processed in outbox order"
