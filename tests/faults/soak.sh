#!/usr/bin/env bash
# tests/faults/soak.sh - the chaos soak (see soak.mjs). CI runs a short one; for longer:
#   tests/faults/soak.sh --seconds 1800 [--seed N]
# --topology ha runs it on scripts/cluster.sh's topology instead (soak_ha.sh).
case " $* " in *" --topology ha "*) exec "$(dirname "$0")/soak_ha.sh" "$@" ;; esac
. "$(dirname "$0")/../harness/lib.sh"
daemon_env faults-soak
harness_export_controls
export DAEMON_PORTS="$(harness_free_port),$(harness_free_port)"
cd "$(dirname "$0")"
node soak.mjs --seconds 75 "$@" 2>>"$H_DIR/daemon.log"
