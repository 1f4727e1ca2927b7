#!/usr/bin/env bash
# consumer.inbox_two_writers: two writers on one inbox and a late-committing backend; every client is
# shown every row once, in seq order. See inbox_two_writers.mjs.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-two-writers
harness_export_controls
export NODE_PATH=$H_ROOT/tests/node_modules
DAEMON_PORT=$(harness_free_port) node "$(dirname "$0")/inbox_two_writers.mjs" 2>>"$H_DIR/daemon.log"
