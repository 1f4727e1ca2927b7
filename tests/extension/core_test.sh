#!/usr/bin/env bash
# tests/extension/core_test.sh - build and run core_test.cpp against extension/src/core.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${H_TMP:-$ROOT/build/test-tmp}/extension-core
mkdir -p "$OUT"
g++ -std=c++17 -Wall -Wextra -O1 -I"$ROOT/extension/src" -I"$ROOT/common" \
	"$ROOT/tests/extension/core_test.cpp" "$ROOT"/extension/src/core/*.cpp -o "$OUT/core_test"
"$OUT/core_test"
