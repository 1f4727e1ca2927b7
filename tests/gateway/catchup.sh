#!/usr/bin/env bash
# tests/gateway/catchup.sh - catch-up after a disconnect and after a daemon restart (catchup.mjs).
. "$(dirname "$0")/gateway.sh"
# Pages of 2 rows: every replay below needs more than one catch-up query, and none may lose a message.
gateway_start gateway-catchup --catchup-limit 2
cd "$(dirname "$0")"
node catchup.mjs disconnect
node catchup.mjs before-restart
daemon_stop
harness_psql "INSERT INTO workers.inbox (message_id, chat_id, body, created_at) VALUES (gen_random_uuid(), 9, 'down-1', now()), (gen_random_uuid(), 9, 'down-2', now())"
daemon_start_again
daemon_wait_healthy
node catchup.mjs after-restart
