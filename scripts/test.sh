#!/usr/bin/env bash
# scripts/test.sh - every test: installs and builds what is missing, then runs CTest.
# The suites start their own PostgreSQL 15 (as an unprivileged user) and redis-server.
#   scripts/test.sh                 everything
#   scripts/test.sh -R unit         only suites matching a CTest regex (extra args go to ctest)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec ctest --test-dir build --output-on-failure --timeout 900 "$@"
