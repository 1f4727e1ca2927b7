#!/usr/bin/env bash
# tests/managed/in_managed_mode.sh [--logical] <suite> [args...] - run a suite written for the
# extension in managed mode: a Postgres with an empty shared_preload_libraries and no extension, set
# up by a non-superuser owner with sql/managed/chat_outbox_managed.sql, and one chat-outbox-relay as
# the relay (tests/harness/lib.sh: HARNESS_PG_MANAGED, HARNESS_MANAGED_RELAY). --logical: woken by
# logical decoding instead of NOTIFY (HARNESS_MANAGED_WAKE=logical). <suite> is relative to tests/.
set -euo pipefail
export HARNESS_PG_MANAGED=1 HARNESS_MANAGED_RELAY=1
if [ "${1:-}" = --logical ]; then
	export HARNESS_MANAGED_WAKE=logical
	shift
fi
exec bash "$(cd "$(dirname "$0")/.." && pwd)/$1" "${@:2}"
