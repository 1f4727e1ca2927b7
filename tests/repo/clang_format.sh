#!/usr/bin/env bash
# repo.clang_format: every tracked .cpp and .hpp file is laid out as .clang-format (and
# extension/src/pg/.clang-format) say, with clang-format 14, the version the files were formatted with
# (another version lays some lines out otherwise). No servers; in the quick set. To fix a finding:
# clang-format-14 -i <file>.
set -euo pipefail
export CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
exec "$(dirname "$0")/../../scripts/check_clang_format.sh"
