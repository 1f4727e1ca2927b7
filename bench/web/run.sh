#!/usr/bin/env bash
# bench/web/run.sh - the web chat's figures (docs/journal/web-chat.md); not part of CTest.
#   bench/web/run.sh   (after `make install` of the extension, as scripts/setup.sh does, and the CMake build)
# Starts PostgreSQL, Redis and the two daemons like tests/web/chat.sh, then bench/web/measure.mjs:
#   1. send -> shown in the other page: 100 messages typed in Workers' page, one every 250 ms, each timed
#      from the submit to its appearance in Consumers' page (and to `shown` in Workers' page);
#   2. history 10,000 messages back: a chat with 10,000 messages (5,000 each way), paged to the
#      beginning by socket.io-client (limit 50: each page's time) and by the page scrolled to its top;
#   3. the daemon's memory per connected client doing what a page does (connect with a sub, chat_state,
#      presence, one history page): 1,000 socket.io-clients, and 20 Chromium pages.
# Speed is printed, never asserted.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/harness/lib.sh"
daemon_env bench-web
harness_export_controls
WEB_ROOT=${BUILD_DIR:-$ROOT/build}/web
WORKERS_PORT=$(harness_free_port)
CONSUMERS_PORT=$(harness_free_port)
export H_DIR WEB_ROOT WORKERS_PORT CONSUMERS_PORT
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
cd "$(dirname "$0")"
node measure.mjs 2>>"$H_DIR/daemon.log"
