#!/usr/bin/env bash
# consumer.crash_never_fails: a job held by two consumers that crash in turn is delayed, never failed.
# See crash_never_fails.mjs.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-crash-never-fails
harness_export_controls
export NODE_PATH=$H_ROOT/tests/node_modules
DAEMON_PORT=$(harness_free_port) node "$(dirname "$0")/crash_never_fails.mjs" 2>>"$H_DIR/daemon.log"
