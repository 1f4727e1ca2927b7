#!/usr/bin/env bash
# tests/extension/batch_add_script.sh - the relay's batch-add script on a real Redis (see the .mjs).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-batch-add-script
harness_redis_start
node "$(dirname "$0")/batch_add_script.mjs" "$REDIS_PORT"
