#!/usr/bin/env bash
# tests/gateway/fuzz.sh - builds the libFuzzer targets (tests/fuzz/*_fuzz.cpp) with clang in their own
# build directory and runs each for FUZZ_SECONDS (default 5; a longer run: FUZZ_SECONDS=600 ctest -R gateway.fuzz); any crash, leak or sanitizer report fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD_DIR:-$root/build}/fuzz
seconds=${FUZZ_SECONDS:-5}
mkdir -p "$out"
# The core library is instrumented too (fuzzer-no-link), so libFuzzer sees coverage inside the parsers.
# -O1 with line tables only: what fuzzing builds usually use, and much cheaper to compile than full
# debug information (this build is most of the suite's time).
CC=clang CXX=clang++ cmake -S "$root" -B "$out/build" -DCHAT_OUTBOX_FUZZ=ON -DCMAKE_BUILD_TYPE=None \
	-DCMAKE_CXX_FLAGS="-O1 -gline-tables-only -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" >"$out/configure.log" 2>&1 ||
	{ tail -20 "$out/configure.log"; exit 1; }
targets=$(cd "$root/tests/fuzz" && ls *_fuzz.cpp | sed 's/\.cpp$//')
cmake --build "$out/build" -j2 --target $targets >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
for t in $targets; do
	mkdir -p "$out/corpus/$t"
	bin=$(find "$out/build" -name "$t" -type f -perm -u+x -print -quit)
	echo "== $t (${seconds}s)"
	if ! "$bin" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$out/" "$out/corpus/$t" >"$out/$t.log" 2>&1; then
		tail -40 "$out/$t.log"
		echo "FAIL $t: see $out/$t.log"
		exit 1
	fi
	tail -1 "$out/$t.log"
done
echo "all fuzz targets ran clean"
