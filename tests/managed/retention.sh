#!/usr/bin/env bash
# tests/managed/retention.sh - chat-outbox-relay rotates and purges what chat_outbox.settings says to, and nothing else.
#   The outbox is rotated (sql/parts/outbox.sql): with `retention` 0 never, with 1 s its generations
#   switch and the oldest are truncated once the relay is past them, refused rows kept; inbox rows
#   received longer ago than `inbox_retention` are deleted (more than one 1,000-row statement's
#   worth); messages and young inbox rows are kept; 0 keeps everything. Relays silent for a day are
#   forgotten.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
relay_managed_env managed-retention

# 5 refused outbox rows; 2,500 inbox rows received an hour ago
q "UPDATE chat_outbox.settings SET retention = '0', inbox_retention = '0'"
q "INSERT INTO consumers.outbox (event, payload, created_at, refused) SELECT 'refused', jsonb_build_object('n', g), now() - interval '1 hour', 'held' FROM generate_series(1, 5) g"
q "INSERT INTO consumers.inbox (message_id, chat_id, body) SELECT gen_random_uuid(), 1, 'old' FROM generate_series(1, 2500)"
q "UPDATE consumers.inbox SET received_at = now() - interval '1 hour'"
q "INSERT INTO consumers.inbox (message_id, chat_id, body) SELECT gen_random_uuid(), 1, 'young' FROM generate_series(1, 20)"
q "INSERT INTO chat_outbox.relays (relay, pid, state, heartbeat_at) VALUES ('gone', 1, 'running', now() - interval '2 days'), ('recent', 2, 'running', now() - interval '1 hour')"
relay_start retention
q "SELECT count(consumers.send_message(1, 'young ' || g)) FROM generate_series(1, 20) g" >/dev/null
harness_wait_value 20 = 0 relay_status unsent
sleep 6 # more than one purge round (every 5 s) with retention 0: nothing may go
expect_eq "retention 0 keeps outbox rows" 25 "$(q "SELECT count(*) FROM consumers.outbox")"
truncated() { q "SELECT truncated FROM chat_outbox.outbox_rotation WHERE service = 'consumers'"; }
expect_eq "retention 0: no truncate" 0 "$(truncated)"
expect_eq "inbox_retention 0 keeps inbox rows" 2520 "$(q "SELECT count(*) FROM consumers.inbox")"

q "UPDATE chat_outbox.settings SET retention = '1 second', inbox_retention = '10 minutes'"
# a send per look, so that each generation takes rows: the first 20 go with the second truncate
sent_and_truncated() { q "SELECT consumers.send_message(2, 'later')" >/dev/null && [ "$(truncated)" -ge 2 ]; }
harness_wait_for 60 sent_and_truncated || fail "no two truncates with retention 1 s (truncated: $(truncated))"
harness_wait_value 20 = 0 relay_status unsent
expect_eq "kept: the refused rows; gone: the first 20 sent ones" "0|5" \
	"$(q "SELECT count(*) FILTER (WHERE payload->>'body' LIKE 'young%'), count(*) FILTER (WHERE refused IS NOT NULL) FROM consumers.outbox")"
expect_eq "outbox rows updated or deleted" 0 "$(q "SELECT sum(n_tup_upd + n_tup_del) FROM pg_stat_user_tables WHERE schemaname = 'consumers' AND relname LIKE 'outbox_events%'")"
harness_wait_value 20 = 20 q "SELECT count(*) FROM consumers.inbox"
expect_eq "kept inbox rows are the young ones" 20 "$(q "SELECT count(*) FROM consumers.inbox WHERE body = 'young'")"
expect_eq "messages are never deleted" 20 "$(q "SELECT count(*) FROM consumers.messages WHERE body LIKE 'young%'")"
expect_eq "relays remembered: the recent one and this one" "recent retention" "$(q "SELECT string_agg(relay, ' ' ORDER BY relay) FROM chat_outbox.relays")"
