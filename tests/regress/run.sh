#!/usr/bin/env bash
# tests/regress/run.sh - pg_regress and pg_isolation_regress for the chat_outbox extension.
#
# Both run on throwaway temp instances with chat_outbox preloaded (chat_outbox.conf.in), against
# a real Redis started here, using the *installed* extension (run `make install` first).
# initdb refuses root, so the files are copied to a scratch dir owned by the postgres user.
#   tests/regress/run.sh                    both suites
#   tests/regress/run.sh regress            pg_regress only;  ... isolation   the specs only
#   tests/regress/run.sh regress roles      one test (or several) of a suite: each test creates the
#                                           extension it uses and drops it, so any one runs alone
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../harness/lib.sh"

what=${1:-all}
shift || true
only=("$@")
[ ${#only[@]} -eq 0 ] || [ "$what" != all ] || { echo "name the suite (regress or isolation) of ${only[*]}" >&2; exit 2; }
harness_init "regress-$what"
harness_redis_start

PGXS_DIR=$(pg_config --pkglibdir)/pgxs
WORK=$H_DIR/work
mkdir -p "$WORK"
cp -r "$HERE/sql" "$HERE/expected" "$HERE/specs" "$WORK/"
sed "s|@REDIS_URL@|$REDIS_URL|" "$HERE/chat_outbox.conf.in" >"$WORK/chat_outbox.conf"
[ "$(id -u)" != 0 ] || chown -R "$PG_USER" "$WORK"

tests_of() { # tests_of <dir> <ext>: the tests named on the command line, or every one in <dir>
	if [ ${#only[@]} -gt 0 ]; then echo "${only[*]}"; return; fi
	(cd "$WORK/$1" && ls -- *."$2" | sed "s/\.$2\$//" | sort | tr '\n' ' ')
}

failed=0
run_suite() { # run_suite <name> <binary> <outdir> <tests...>
	local name=$1 bin=$2 out=$3; shift 3
	mkdir -p "$WORK/$out"
	[ "$(id -u)" != 0 ] || chown "$PG_USER" "$WORK/$out"
	if ! (cd "$WORK" && harness_as_pg "$bin" --temp-instance="$WORK/tmp_$out" --temp-config="$WORK/chat_outbox.conf" \
		--bindir="$PG_BIN" --inputdir="$WORK" --outputdir="$WORK/$out" --port="$(harness_free_port)" \
		--dbname=contrib_regression "$@"); then
		echo "---- $name failed; $WORK/$out/regression.diffs:" >&2
		cat "$WORK/$out/regression.diffs" >&2 || true
		failed=1
	fi
}

if [ "$what" = all ] || [ "$what" = regress ]; then
	# shellcheck disable=SC2046
	run_suite pg_regress "$PGXS_DIR/src/test/regress/pg_regress" regress $(tests_of sql sql)
fi
if [ "$what" = all ] || [ "$what" = isolation ]; then
	# shellcheck disable=SC2046
	run_suite pg_isolation_regress "$PGXS_DIR/src/test/isolation/pg_isolation_regress" isolation $(tests_of specs spec)
fi
exit $failed
