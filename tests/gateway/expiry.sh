#!/usr/bin/env bash
# tests/gateway/expiry.sh - token expiry ends connections; a session that never joins is closed (expiry.mjs).
. "$(dirname "$0")/gw_lib.sh"
GW_EXTRA_ARGS="--connect-timeout 1000"
gw_start_all gateway-expiry
cd "$(dirname "$0")"
node expiry.mjs
