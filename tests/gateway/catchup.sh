#!/usr/bin/env bash
# tests/gateway/catchup.sh - catch-up after a disconnect and after a daemon restart (catchup.mjs), and the
# gateway's SQL under a hostile search_path.
. "$(dirname "$0")/gateway.sh"
# Pages of 2 rows: every replay below needs more than one catch-up query, and none may lose a message.
gateway_start gateway-catchup --catchup-limit 2
cd "$(dirname "$0")"
node catchup.mjs disconnect
node catchup.mjs before-restart
daemon_stop
harness_psql "INSERT INTO workers.inbox (message_id, chat_id, body, created_at) VALUES (gen_random_uuid(), 9, 'down-1', now()), (gen_random_uuid(), 9, 'down-2', now())"
# Restarted while Postgres is down, the daemon cannot tell a client where the inbox stands: it admits
# none (a Socket.IO handshake gets 503, a /ws upgrade is refused, /healthz says 503) until it has read it.
harness_pg_ctl -m fast -w stop >/dev/null
daemon_start_again
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
harness_wait_for 10 curl -s -o /dev/null "$DAEMON_URL/healthz"
expect_eq "/healthz before the daemon read the inbox" 503 "$(code "$DAEMON_URL/healthz")"
expect_eq "a Socket.IO handshake before it read the inbox" 503 "$(code "$DAEMON_URL/socket.io/?EIO=4&transport=polling")"
ws_upgrade() { code -H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' \
	-H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' --max-time 5 "$DAEMON_URL/ws"; }
up=$(ws_upgrade || true)
[ "$up" != 101 ] || fail "a /ws upgrade was accepted before the daemon read the inbox"
echo "ok   not admitting clients before it read the inbox: /healthz 503, handshake 503, /ws upgrade answered $up"
harness_pg_ctl -w start >/dev/null
daemon_wait_healthy
node catchup.mjs after-restart

# The gateway's SQL names pg_catalog's functions and operators: a schema earlier in the connection's
# search_path that defines its own to_json changes nothing in replays or send acks.
daemon_stop
harness_psql "CREATE SCHEMA evil; CREATE FUNCTION evil.to_json(timestamptz) RETURNS json LANGUAGE sql AS \$\$SELECT '\"evil\"'::json\$\$"
DAEMON_FLAGS+=(--database-url "$PGURL?options=-csearch_path%3Devil%2Cpg_catalog")
daemon_start_again
daemon_wait_healthy
node catchup.mjs search-path
