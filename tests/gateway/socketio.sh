#!/usr/bin/env bash
# tests/gateway/socketio.sh - socket.io-client 4.8.1 against chat-outboxd: transports, heartbeats,
# rooms, join/leave/send with acks, auth refusals (socketio.mjs).
. "$(dirname "$0")/gw_lib.sh"
gw_start_all gateway-socketio
cd "$(dirname "$0")"
node socketio.mjs
