#!/usr/bin/env bash
# tests/gateway/plain_ws.sh - the plain JSON WebSocket endpoint /ws (plain_ws.mjs).
. "$(dirname "$0")/gw_lib.sh"
gw_start_all gateway-plain-ws
cd "$(dirname "$0")"
node plain_ws.mjs
