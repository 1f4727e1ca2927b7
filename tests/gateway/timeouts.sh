#!/usr/bin/env bash
# tests/gateway/timeouts.sh - a stalled Engine.IO upgrade probe is dropped after --upgrade-timeout
# while its polling session goes on; a silent /ws peer is closed by the keepalive (timeouts.mjs).
. "$(dirname "$0")/gw_lib.sh"
GW_EXTRA_ARGS="--upgrade-timeout 500" GW_PING_INTERVAL=1500 GW_PING_TIMEOUT=1500
gw_start_all gateway-timeouts
cd "$(dirname "$0")"
node timeouts.mjs
