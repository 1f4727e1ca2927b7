#!/usr/bin/env bash
# tests/gateway/conversation.sh - the conversation events (history, read, typing, presence, shown,
# sent) between two daemons of the two services, over Socket.IO and /ws (see conversation.mjs).
. "$(dirname "$0")/../harness/lib.sh"
daemon_env gateway-conversation
harness_export_controls
WORKERS_PORT=$(harness_free_port)
CONSUMERS_PORT=$(harness_free_port)
export H_DIR WORKERS_PORT CONSUMERS_PORT
cd "$(dirname "$0")"
node conversation.mjs 2>>"$H_DIR/daemon.log"
