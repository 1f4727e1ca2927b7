#!/usr/bin/env bash
# tests/managed/switch_modes.sh - the switch procedure of docs/managed.md, both ways, loses nothing
# and sends nothing twice.
#   Database chat runs the extension (its relay serves chat); database chat_managed, in the same
#   cluster, has the managed install owned by a non-superuser and is relayed by chat-outbox-relay.
#   1. extension -> external: rows pile up in chat while its relay is paused; the services' data is
#      copied with sql/managed/copy_services.sh into chat_managed, then chat-outbox-relay starts there.
#   2. external -> extension: rows pile up in chat_managed while no relay runs; the data is copied
#      back into chat (its service tables emptied first), then the extension's relay is resumed.
# A real bullmq Worker records every processed job and every `duplicated` event: after each switch
# every stored message was processed exactly once and no job was added twice.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init managed-switch
harness_redis_start
harness_pg_start
export REDIS_URL PGURL
EXT_URL=$PGURL
MANAGED_URL="postgresql://chat_owner@127.0.0.1:$PG_PORT/chat_managed"
HERE=$H_ROOT/tests/extension
PROCESSED=$H_DIR/processed.txt
DUPLICATED=$H_DIR/duplicated.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"
. "$HERE/delivery.sh"

set_relay_enabled() {
	PGURL=$EXT_URL harness_psql "ALTER SYSTEM SET chat_outbox.relay_enabled = $1"
	PGURL=$EXT_URL harness_psql "SELECT pg_reload_conf()" >/dev/null
}
copy_services() { # copy_services <from url> <to url>: the procedure's data step
	bash "$H_ROOT/sql/managed/copy_services.sh" "$1" "$2" >"$H_DIR/copy.log" 2>&1 || { cat "$H_DIR/copy.log"; fail "copy into $2"; }
}
no_duplicates() { expect_eq "$1: jobs added twice (duplicated events)" 0 "$(wc -l <"$DUPLICATED")"; }

node "$HERE/consume.mjs" "$PROCESSED" "$DUPLICATED" >"$H_DIR/consumer.log" 2>&1 &
harness_track $!
harness_wait_for 20 grep -q ready "$H_DIR/consumer.log"

node "$HERE/send.mjs" 100 extension 0 >"$H_DIR/sender1.log" 2>&1
verify_delivered "in-database relay"

# 1. extension -> external
set_relay_enabled off
harness_wait_value 20 = paused relay_status relay_state
node "$HERE/send.mjs" 100 paused 0 >"$H_DIR/sender2.log" 2>&1
expect_eq "rows waiting while paused" 100 "$(relay_status unsent)"
psql -XAtq -v ON_ERROR_STOP=1 "$PG_SUPER_URL" -c "CREATE ROLE chat_owner LOGIN" -c "CREATE DATABASE chat_managed OWNER chat_owner"
psql -XAtq -v ON_ERROR_STOP=1 "$MANAGED_URL" -f "$H_ROOT/sql/managed/chat_outbox_managed.sql" >/dev/null
copy_services "$EXT_URL" "$MANAGED_URL"
PGURL=$MANAGED_URL
expect_eq "unsent rows moved" 100 "$(relay_status unsent)"
relay_start managed
PGURL=$MANAGED_URL node "$HERE/send.mjs" 100 managed 0 >"$H_DIR/sender3.log" 2>&1
verify_delivered "extension -> external relay"
no_duplicates "extension -> external relay"

# 2. external -> extension
kill -TERM "$RELAY_PID"
wait "$RELAY_PID"
PGURL=$MANAGED_URL node "$HERE/send.mjs" 100 stopped 0 >"$H_DIR/sender4.log" 2>&1
expect_eq "rows waiting with no relay" 100 "$(relay_status unsent)"
PGURL=$EXT_URL harness_psql "TRUNCATE consumers.messages, consumers.outbox_events, consumers.outbox_refused, consumers.inbox, workers.messages, workers.outbox_events, workers.outbox_refused, workers.inbox"
copy_services "$MANAGED_URL" "$EXT_URL"
PGURL=$EXT_URL
expect_eq "unsent rows moved back" 100 "$(relay_status unsent)"
set_relay_enabled on
node "$HERE/send.mjs" 100 back 0 >"$H_DIR/sender5.log" 2>&1
verify_delivered "external -> in-database relay"
no_duplicates "external -> in-database relay"
