#!/usr/bin/env bash
# tests/faults/writeup_scenario.sh - the write-up's experiment, both directions, with and without
# a Postgres restart during the Redis outage. See writeup_scenario.mjs.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env faults-writeup
harness_export_controls
cd "$(dirname "$0")"
chat=100
for variant in "" --pg-restart; do
	for direction in 'consumers->workers' 'workers->consumers'; do
		chat=$((chat + 1)) # each run counts its own chat's messages
		DAEMON_PORT=$(harness_free_port) node writeup_scenario.mjs --direction "$direction" --chat $chat $variant \
			2>>"$H_DIR/daemon.log"
	done
done
