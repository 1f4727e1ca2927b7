#!/usr/bin/env bash
# tests/gateway/two_sides.sh <peer.mjs> [peer args...] - a gateway suite between the two services: Postgres with the
# extension's relay and Redis (daemon_env), then the Node peer, which starts a daemon per service on
# WORKERS_PORT and CONSUMERS_PORT, and may start a third on SPARE_PORT (conversation.mjs, edits.mjs);
# its exit status is the suite's.
. "$(dirname "$0")/../harness/lib.sh"
peer=$1
daemon_env "gateway-${peer%.mjs}"
harness_export_controls
WORKERS_PORT=$(harness_free_port)
CONSUMERS_PORT=$(harness_free_port)
SPARE_PORT=$(harness_free_port)
export H_DIR WORKERS_PORT CONSUMERS_PORT SPARE_PORT
cd "$(dirname "$0")"
node "$peer" "${@:2}" 2>>"$H_DIR/daemon.log"
