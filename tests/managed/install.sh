#!/usr/bin/env bash
# tests/managed/install.sh - the plain-SQL install on a Postgres that loads no library of ours.
#   1. sql/managed/chat_outbox_managed.sql, built, is what sql/managed/generate.py makes of today's
#      parts (so the build ran, and the two modes never drift).
#   2. A cluster with an empty shared_preload_libraries, a database owned by a role that is not a
#      superuser, the file run by that role with psql -f (HARNESS_PG_MANAGED=1 in the harness).
#   3. The API (tests/managed/api.sql, with the parts both installs share from
#      tests/regress/sql/shared/): send_message returns the row, every bad input gives the
#      extension's SQLSTATE and writes nothing, create_service, grant_service, the status view, no
#      C function; its output must equal tests/managed/api.expected.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init managed-install

python3 "$H_ROOT/sql/managed/generate.py" --check || fail "the built SQL is not what sql/parts/ make today: build again (make, or cmake --build)"
echo "ok   the built SQL (sql/managed/generate.py --list) is up to date with sql/parts/"

HARNESS_PG_MANAGED=1 harness_pg_start
echo "ok   installed by a non-superuser owner with psql -f"
preload=$(psql -XAtq "$PG_SUPER_URL" -c "SHOW shared_preload_libraries")
[ -z "$preload" ] || fail "shared_preload_libraries is '$preload'"
# the provider's admin creates the application roles; the owner may act as them (SET ROLE)
psql -XAtq -v ON_ERROR_STOP=1 "$PG_SUPER_URL" -c "CREATE ROLE consumers_app LOGIN" -c "CREATE ROLE workers_app LOGIN" \
	-c "CREATE ROLE consumers_daemon LOGIN" -c "GRANT consumers_app, workers_app, consumers_daemon TO chat_owner" \
	-c "ALTER DATABASE chat SET track_functions = 'pl'" # api_waiting.sql counts inbox_apply's calls
psql -Xa -v ON_ERROR_STOP=0 "$PGURL" -f "$H_ROOT/tests/managed/api.sql" >"$H_DIR/api.out" 2>&1
# psql prints a file's errors with their line: keep only the message, lines move as the file grows
sed -i -E 's/^psql:[^:]+:[0-9]+: //' "$H_DIR/api.out"
if ! diff -u "$H_ROOT/tests/managed/api.expected" "$H_DIR/api.out" >"$H_DIR/api.diff"; then
	cat "$H_DIR/api.diff"
	fail "the managed API differs from tests/managed/api.expected"
fi
echo "ok   API as expected: $(grep -c '^[0-9A-Z]\{5\}$' "$H_DIR/api.out") SQLSTATEs checked, no C function"
