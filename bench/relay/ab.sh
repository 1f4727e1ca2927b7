#!/usr/bin/env bash
# bench/relay/ab.sh <git rev> [rounds]: bench/relay/run.sh for <rev> (A) and for the working tree (B),
# alternating A B A B ... so both see the same minutes of a shared machine.
#   bench/relay/ab.sh HEAD~1 3        env for run.sh (SECTIONS, BACKLOG, ...) passes through
# Neither build is installed: each gets a private copy of PostgreSQL's bin/lib/share under $AB_DIR
# (PostgreSQL finds lib/ and share/ relative to its binary), so nothing shared on the machine changes.
set -euo pipefail
REV=${1:?usage: ab.sh <git rev> [rounds]} ROUNDS_AB=${2:-3}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
AB_DIR=${AB_DIR:-/tmp/chat_outbox-relay-ab}
PG_LIB=/usr/lib/postgresql/15 PG_SHARE=/usr/share/postgresql/15

tree() { # tree <dir> <source dir>: PostgreSQL with <source dir>'s chat_outbox.so, SQL and control file
	rm -rf "$1" && mkdir -p "$1/usr/lib/postgresql" "$1/usr/share/postgresql"
	cp -a "$PG_LIB" "$1/usr/lib/postgresql/15" && cp -a "$PG_SHARE" "$1/usr/share/postgresql/15"
	cp "$2/chat_outbox.so" "$1/usr/lib/postgresql/15/lib/"
	cp "$2"/sql/chat_outbox--*.sql "$2/chat_outbox.control" "$1/usr/share/postgresql/15/extension/"
	chmod -R a+rX "$1"
}

mkdir -p "$AB_DIR" && rm -rf "$AB_DIR/src-a" && mkdir "$AB_DIR/src-a"
git -C "$ROOT" archive "$REV" | tar -x -C "$AB_DIR/src-a"
make -C "$AB_DIR/src-a" -j2 >"$AB_DIR/build-a.log" 2>&1
make -C "$ROOT" -j2 >"$AB_DIR/build-b.log" 2>&1
tree "$AB_DIR/a" "$AB_DIR/src-a"
tree "$AB_DIR/b" "$ROOT"
for round in $(seq "$ROUNDS_AB"); do
	for side in a b; do
		echo "=== round $round, $side ($([ $side = a ] && echo "$REV" || echo "working tree"))"
		PG_BIN=$AB_DIR/$side/usr/lib/postgresql/15/bin H_TMP=$AB_DIR/tmp bash "$ROOT/bench/relay/run.sh"
	done
done
