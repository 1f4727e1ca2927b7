#!/usr/bin/env bash
# tests/gateway/edits.sh - edits and deletes end to end (see edits.mjs): two daemons of the two
# services, the extension's relay, real socket.io-client, /ws and bullmq Worker peers.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env gateway-edits
harness_export_controls
WORKERS_PORT=$(harness_free_port)
CONSUMERS_PORT=$(harness_free_port)
export H_DIR WORKERS_PORT CONSUMERS_PORT
cd "$(dirname "$0")"
node edits.mjs 2>>"$H_DIR/daemon.log"
