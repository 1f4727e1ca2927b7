#!/usr/bin/env bash
# tests/gateway/catchup.sh - catch-up after a disconnect and after a daemon restart (catchup.mjs).
. "$(dirname "$0")/gw_lib.sh"
gw_start_all gateway-catchup
export H_DIR
cd "$(dirname "$0")"
node catchup.mjs disconnect
node catchup.mjs before-restart
gw_stop_daemon
harness_psql "INSERT INTO workers.inbox (message_id, chat_id, body, created_at) VALUES (gen_random_uuid(), 9, 'down-1', now()), (gen_random_uuid(), 9, 'down-2', now())"
gw_start_daemon
node catchup.mjs after-restart
