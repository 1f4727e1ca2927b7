#!/usr/bin/env bash
# scripts/check_clang_format.sh - every tracked .cpp and .hpp file is laid out as .clang-format (and
# extension/src/pg/.clang-format) say: clang-format --dry-run finds nothing to change. Prints each place it
# would change with --verbose, else one line per file with its count; then the total; exit 1 if any.
# The quick suite repo.clang_format (tests/repo/clang_format.sh) runs it.
#   scripts/check_clang_format.sh [--verbose] [FILE...]      (default: every tracked .cpp and .hpp)
# CLANG_FORMAT names the program (default clang-format; the files are measured with version 14).
set -euo pipefail
cd "$(dirname "$0")/.."
verbose=0
if [ "${1:-}" = --verbose ]; then verbose=1; shift; fi
if [ $# -gt 0 ]; then files=("$@"); else mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp'); fi
out=$("${CLANG_FORMAT:-clang-format}" --dry-run "${files[@]}" 2>&1 || true)
if [ "$verbose" = 1 ]; then printf '%s\n' "$out" | grep -A2 'warning:' || true
else printf '%s\n' "$out" | grep 'warning:' | cut -d: -f1 | sort | uniq -c || true; fi
n=$(printf '%s\n' "$out" | grep -c 'warning:' || true)
echo "$n places in ${#files[@]} files differ from .clang-format"
[ "$n" = 0 ]
