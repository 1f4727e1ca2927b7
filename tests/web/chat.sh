#!/usr/bin/env bash
# tests/web/chat.sh - the web client in headless Chromium against two daemons (see chat.mjs).
. "$(dirname "$0")/../harness/lib.sh"
daemon_env web-chat
harness_export_controls
WEB_ROOT=${BUILD_DIR:-$H_ROOT/build}/web
[ -f "$WEB_ROOT/index.html" ] && [ -f "$WEB_ROOT/socket.io.min.js" ] ||
	{ echo "FAIL: $WEB_ROOT lacks the web client; build the 'web' target" >&2; exit 1; }
WORKERS_PORT=$(harness_free_port)
CONSUMERS_PORT=$(harness_free_port)
export H_DIR WEB_ROOT WORKERS_PORT CONSUMERS_PORT
cd "$(dirname "$0")"
node chat.mjs 2>>"$H_DIR/daemon.log"
