#!/usr/bin/env bash
# tests/gateway/bus.sh <phase> - several chat-outboxd of one service on one queue (bus.mjs says what
# each phase checks). The daemons' output goes to $H_DIR/daemons.log.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env "gateway-bus-$1"
harness_export_controls
ports=()
for _ in 1 2 3; do ports+=("$(harness_free_port)"); done
BUS_PORTS=$(IFS=,; echo "${ports[*]}")
DAEMON_URL=http://127.0.0.1:${ports[0]} # peer_lib.mjs' default daemon
export BUS_PORTS DAEMON_URL H_DIR
cd "$(dirname "$0")"
node bus.mjs "$1" 2>>"$H_DIR/daemons.log"
