#!/usr/bin/env bash
# harness.deep_path: the harness works from a checkout in a deep folder. A Unix socket path may not
# exceed 107 bytes; CI runners keep workspaces under long paths. Here $H_TMP is over 200 bytes deep:
# Redis, Postgres (with the extension) and a psql over Postgres' Unix socket must all work, and the
# short socket folder must be gone once the test's cleanup ran.
. "$(dirname "$0")/lib.sh"
harness_init harness-deep-path
deep=$H_DIR/$(printf 'd%.0s' {1..100})/$(printf 'e%.0s' {1..100})
mkdir -p "$deep"
chmod -R 777 "$H_DIR"

# the inner test runs in its own bash, so its EXIT trap (the cleanup) runs when it ends
out=$(H_TMP=$deep bash -c '
	. "$1/lib.sh"
	harness_init inner
	harness_redis_start
	harness_pg_start
	[ "$(harness_psql "SELECT extname FROM pg_extension WHERE extname = '\''chat_outbox'\''")" = chat_outbox ] || exit 1
	[ "$(harness_as_pg psql -XAtq -h "$PG_SOCKDIR" -p "$PG_PORT" -U postgres -d chat -c "SELECT 1")" = 1 ] || exit 1
	[ "$(rcli ping)" = PONG ] || exit 1
	echo "$H_SOCK"' inner "$(dirname "$0")" 2>"$H_DIR/inner.log") || { cat "$H_DIR/inner.log" >&2; fail "the harness failed under $deep"; }
sock=${out##*$'\n'}
echo "ok: Postgres, the extension and Redis under a ${#deep}-byte scratch folder"
[ -n "$sock" ] && [ ! -e "$sock" ] || fail "socket folder '$sock' left behind"
echo "ok: socket folder $sock removed at exit"
echo PASS
