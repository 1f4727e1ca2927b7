#!/usr/bin/env bash
# tests/gateway/faults.sh - bad frames close only their connection; Engine.IO HTTP errors (faults.mjs).
. "$(dirname "$0")/gw_lib.sh"
GW_EXTRA_ARGS="--max-payload 100000"
gw_start_all gateway-faults
cd "$(dirname "$0")"
node faults.mjs
