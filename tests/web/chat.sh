#!/usr/bin/env bash
# tests/web/chat.sh [peer.mjs] - the web client in headless Chromium against daemons the Node peer
# starts (chat.mjs by default; members.mjs: --authz membership).
. "$(dirname "$0")/../harness/lib.sh"
peer=${1:-chat.mjs}
daemon_env "web-${peer%.mjs}"
harness_export_controls
WEB_ROOT=${BUILD_DIR:-$H_ROOT/build}/web
[ -f "$WEB_ROOT/index.html" ] && [ -f "$WEB_ROOT/socket.io.min.js" ] ||
	{ echo "FAIL: $WEB_ROOT lacks the web client; build the 'web' target" >&2; exit 1; }
WORKERS_PORT=$(harness_free_port)
CONSUMERS_PORT=$(harness_free_port)
export H_DIR WEB_ROOT WORKERS_PORT CONSUMERS_PORT
cd "$(dirname "$0")"
node "$peer" 2>>"$H_DIR/daemon.log"
