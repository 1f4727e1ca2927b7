#!/usr/bin/env bash
# tests/valkey/on_valkey.sh <suite> [args...] - run a suite written for Redis against Valkey instead:
# every server the harness starts for it is valkey-server (8, from bookworm-backports; scripts/setup.sh
# installs it), through the harness's parameter HARNESS_REDIS_SERVER (tests/harness/lib.sh), and the
# cluster tools are valkey-cli's (HARNESS_REDIS_CLI).
# <suite> is relative to tests/. Fails, saying why, when valkey-server is not Valkey 8 or later: a
# suite that silently ran on Redis again would prove nothing about Valkey.
set -euo pipefail
export HARNESS_REDIS_SERVER=valkey-server HARNESS_REDIS_CLI=valkey-cli
# "Valkey server v=8.0.1 sha=..."
version=$("$HARNESS_REDIS_SERVER" --version 2>&1) || { echo "cannot run $HARNESS_REDIS_SERVER (scripts/setup.sh installs valkey-server): $version" >&2; exit 1; }
major=$(echo "$version" | sed -n 's/^Valkey server v=\([0-9]*\)\..*/\1/p')
[ -n "$major" ] && [ "$major" -ge 8 ] || { echo "$HARNESS_REDIS_SERVER is not Valkey 8 or later: $version" >&2; exit 1; }
echo "on $version"
exec bash "$(cd "$(dirname "$0")/.." && pwd)/$1" "${@:2}"
