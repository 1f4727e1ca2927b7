#!/usr/bin/env bash
# tests/managed/retention.sh - chat-outbox-relay deletes what chat_outbox.settings says to, and nothing else.
#   Sent outbox rows older than `retention` and inbox rows received longer ago than
#   `inbox_retention` are deleted (more than one 1,000-row statement's worth); refused
#   rows, messages, and young rows are kept; 0 keeps everything. Relays silent for a day are forgotten.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
relay_managed_env managed-retention

# old rows: 2,500 sent an hour ago and 5 refused ones as old; 2,500 inbox rows received an hour ago
q "UPDATE chat_outbox.settings SET retention = '0', inbox_retention = '0'"
q "ALTER TABLE consumers.outbox DISABLE TRIGGER wake_relay" # the rows below are not for the relay
q "INSERT INTO consumers.outbox (event, payload, created_at, sent_at) SELECT 'old', jsonb_build_object('n', g), now() - interval '1 hour', now() - interval '1 hour' FROM generate_series(1, 2500) g"
q "INSERT INTO consumers.outbox (event, payload, created_at, refused) SELECT 'refused', jsonb_build_object('n', g), now() - interval '1 hour', 'held' FROM generate_series(1, 5) g"
q "ALTER TABLE consumers.outbox ENABLE TRIGGER wake_relay"
q "INSERT INTO consumers.inbox (message_id, chat_id, body) SELECT gen_random_uuid(), 1, 'old' FROM generate_series(1, 2500)"
q "UPDATE consumers.inbox SET received_at = now() - interval '1 hour'"
q "INSERT INTO consumers.inbox (message_id, chat_id, body) SELECT gen_random_uuid(), 1, 'young' FROM generate_series(1, 20)"
q "INSERT INTO chat_outbox.relays (relay, pid, state, heartbeat_at) VALUES ('gone', 1, 'running', now() - interval '2 days'), ('recent', 2, 'running', now() - interval '1 hour')"
relay_start retention
q "SELECT count(consumers.send_message(1, 'young ' || g)) FROM generate_series(1, 20) g" >/dev/null
harness_wait_value 20 = 0 relay_status unsent
sleep 6 # more than one purge round (every 5 s) with retention 0: nothing may go
expect_eq "retention 0 keeps outbox rows" 2525 "$(q "SELECT count(*) FROM consumers.outbox")"
expect_eq "inbox_retention 0 keeps inbox rows" 2520 "$(q "SELECT count(*) FROM consumers.inbox")"

q "UPDATE chat_outbox.settings SET retention = '10 minutes', inbox_retention = '10 minutes'"
harness_wait_value 20 = 25 q "SELECT count(*) FROM consumers.outbox"
expect_eq "kept: the young sent rows and the refused ones" "20|5" \
	"$(q "SELECT count(*) FILTER (WHERE event = 'message.created' AND sent_at IS NOT NULL), count(*) FILTER (WHERE refused IS NOT NULL) FROM consumers.outbox")"
harness_wait_value 20 = 20 q "SELECT count(*) FROM consumers.inbox"
expect_eq "kept inbox rows are the young ones" 20 "$(q "SELECT count(*) FROM consumers.inbox WHERE body = 'young'")"
expect_eq "messages are never deleted" 20 "$(q "SELECT count(*) FROM consumers.messages")"
expect_eq "relays remembered: the recent one and this one" "recent retention" "$(q "SELECT string_agg(relay, ' ' ORDER BY relay) FROM chat_outbox.relays")"
