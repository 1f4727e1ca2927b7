#!/usr/bin/env bash
# bench/relay/script_cost.sh <rev A> [<rev B>] [rounds] - what the batch-add script costs Redis per job,
# common/relay/lua/batch_add.lua (after common/bullmq/lua/prelude.lua) at rev A against rev B
# (default: the working tree's files).
#   1. CPU time per job, alternating A and B on one Redis (script_cost.mjs): as noisy as the machine.
#   2. Instructions per job, counted by callgrind on a Redis of its own: the same on every run, so a
#      difference of 1% shows; the slope between 2,000 and 6,000 jobs leaves out the fixed costs.
# Redis runs as the tests run it (appendonly yes, appendfsync everysec). Needs no Postgres.
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
REV_A=${1:?usage: script_cost.sh <rev A> [<rev B>] [rounds]} REV_B=${2:-} ROUNDS=${3:-16}
HERE=$H_ROOT/bench/relay FILE=common/relay/lua/batch_add.lua PRELUDE=common/bullmq/lua/prelude.lua
# before the scripts were .lua files, they were raw strings in these (tests/harness/batch_add_lua.mjs reads both)
CPP_FILE=common/relay/bullmq_batch_add.cpp CPP_PRELUDE=common/bullmq/lua_prelude.hpp
harness_init bench-script-cost
# each version is its script's source and the shared prelude's beside it as <a|b>-prelude.src
version() { # version <a|b> <rev, empty for the working tree>
	if [ -z "$2" ]; then
		cp "$H_ROOT/$FILE" "$H_DIR/$1.src"
		cp "$H_ROOT/$PRELUDE" "$H_DIR/$1-prelude.src"
	elif git -C "$H_ROOT" show "$2:$FILE" >"$H_DIR/$1.src" 2>/dev/null; then
		git -C "$H_ROOT" show "$2:$PRELUDE" >"$H_DIR/$1-prelude.src"
	else
		git -C "$H_ROOT" show "$2:$CPP_FILE" >"$H_DIR/$1.src"
		git -C "$H_ROOT" show "$2:$CPP_PRELUDE" >"$H_DIR/$1-prelude.src" 2>/dev/null || : # none before there was one
	fi
}
version a "$REV_A"
version b "$REV_B"
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); A = $REV_A, B = ${REV_B:-working tree}"

harness_redis_start
node "$HERE/script_cost.mjs" "$REDIS_PORT" "$H_DIR/a.src" "$H_DIR/b.src" "$ROUNDS"
harness_redis_stop

command -v valgrind >/dev/null || { echo "no valgrind: instruction counts skipped"; exit 0; }
REDIS_PORT=$(harness_free_port)
mkdir "$H_DIR/callgrind-redis" # a fresh dir: replaying the AOF above would be counted too
valgrind --tool=callgrind --callgrind-out-file="$H_DIR/callgrind.out" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 \
	--dir "$H_DIR/callgrind-redis" --appendonly yes --appendfsync everysec --maxmemory-policy noeviction --save '' >"$H_DIR/callgrind.log" 2>&1 &
cg_pid=$!
harness_track $cg_pid
harness_wait_for 60 bash -c "redis-cli -p $REDIS_PORT ping | grep -q PONG"
instructions() { # instructions <a|b> <jobs>: instructions Redis executed for the run
	redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
	callgrind_control -z $cg_pid >/dev/null 2>&1
	ONLY=$1 node "$HERE/script_cost.mjs" "$REDIS_PORT" "$H_DIR/a.src" "$H_DIR/b.src" 1 "$2"
	callgrind_control -d $cg_pid >/dev/null 2>&1 # returns once the dump is written
	local f; f=$(ls "$H_DIR"/callgrind.out.*)
	awk '/^(summary|totals):/ {print $2; exit}' "$f"
	rm -f "$f"
}
for v in a b; do
	small=$(instructions $v 2000) large=$(instructions $v 6000)
	echo "# $v: $small instructions for 2,000 jobs, $large for 6,000" >&2
	echo "redis instructions per job, $v: $(( (large - small) / 4000 )) (callgrind, 2,000 -> 6,000 jobs)"
done
redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
