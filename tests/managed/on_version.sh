#!/usr/bin/env bash
# tests/managed/on_version.sh <major> <suite> [args...] - run a managed-mode suite against PostgreSQL
# <major> (16, 17 or 18): the server of the npm package pg<major> that tests/package.json pins
# (tests/harness/lib.sh: PG_MAJOR). <suite> is relative to tests/, for example managed/relay.sh, or
# managed/in_managed_mode.sh extension/relay_e2e.sh for a suite written for the extension.
set -euo pipefail
case "${1:-}" in
16 | 17 | 18) ;;
*) echo "usage: $0 16|17|18 <suite> [args...]" >&2; exit 2 ;;
esac
export PG_MAJOR=$1
exec bash "$(cd "$(dirname "$0")/.." && pwd)/$2" "${@:3}"
