#!/usr/bin/env bash
# tests/extension/relay_e2e.sh - send_message -> relay worker -> a real bullmq Worker (relay_e2e.mjs).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-relay-e2e
harness_redis_start
harness_pg_start
export REDIS_URL PGURL
cd "$H_ROOT/tests" && node extension/relay_e2e.mjs
