#!/usr/bin/env bash
# tests/extension/missing_database.sh - chat_outbox.database names a database that does not exist
# yet. The relay's first two connections die (two FATALs: a setup script often creates the
# database right after the server starts); after that it waits on the shared catalogs, saying so
# once, instead of a FATAL and a restart every second. Once the database and the
# extension exist, it connects and relays. The same holds for a database that exists but does
# not allow connections (ALTER DATABASE ... ALLOW_CONNECTIONS false).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-missing-db
harness_redis_start
harness_pg_start "" "chat_outbox.database = 'later'"
LOG=$H_DIR/postgres.log
LATER_URL=${PGURL%/chat}/later
count() { grep -c "$1" "$LOG" || true; }
# logged MSG: MSG is in the log, after a connection to the server. The waiting line comes from a
# restarted worker, and PostgreSQL 15's postmaster can restart a worker late: an exit signal that
# arrives while it is between two select() calls is handled before it sleeps again for up to
# 60 s (fixed in 16). Any connection wakes it, as the connection of a client that sends does
# (docs/extension.md, "Failures"). The CI run that saw it: no third start in 20 s.
logged() { psql -XAtq "$PGURL" -c "SELECT 1" >/dev/null; grep -q "$1" "$LOG"; }

harness_wait_for 20 logged 'database "later" does not exist; waiting for it'
# The property is an absence (no restart loop), so it needs a window: three of the postmaster's
# 1 s restart intervals, in which the old behaviour logged three more FATALs.
sleep 3
[ "$(count 'FATAL:  database "later" does not exist')" = 2 ] || fail "FATALs: $(count 'FATAL:  database "later" does not exist')"
[ "$(count 'waiting for it')" = 1 ] || fail "waiting lines: $(count 'waiting for it')"
# the relay's state lives in shared memory: the status view of any database with the extension shows it
state=$(relay_status relay_state)
[ "$state" = "waiting for database" ] || fail "state while missing: $state"
echo "ok   two FATALs and one waiting line in $(($(date +%s) - $(stat -c %Y "$H_DIR/initdb.log"))) s"

psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "CREATE DATABASE later" >/dev/null
psql -XAtq -v ON_ERROR_STOP=1 "$LATER_URL" -c "CREATE EXTENSION chat_outbox" >/dev/null
harness_wait_for 20 grep -q 'database "later" exists now; restarting to connect to it' "$LOG"
id=$(psql -XAtq -v ON_ERROR_STOP=1 "$LATER_URL" -c "SELECT id FROM consumers.send_message(1, 'after the wait')")
unsent() { relay_status unsent "$LATER_URL"; }
harness_wait_value 20 = 0 unsent
[ "$(rcli HGET "bull:chat-messages:$id" name)" = message.created ] || fail "job $id not in Redis"
[ "$(relay_status relay_state "$LATER_URL")" = running ] || fail "state"
[ "$(count 'FATAL:  database "later" does not exist')" = 2 ] || fail "FATALs after: $(count 'FATAL:  database "later" does not exist')"
echo "ok   relayed $id once the database existed"

psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "ALTER DATABASE later ALLOW_CONNECTIONS false" >/dev/null
psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'" >/dev/null
harness_wait_for 20 logged 'database "later" does not allow connections; waiting for it'
sleep 3 # as above: three restart intervals in which a restart loop would log three more FATALs
refused='FATAL:  database "later" is not currently accepting connections'
[ "$(count "$refused")" = 2 ] || fail "FATALs while refusing: $(count "$refused")"
[ "$(count 'does not allow connections; waiting for it')" = 1 ] || fail "waiting lines: $(count 'does not allow connections; waiting for it')"
state=$(relay_status relay_state)
[ "$state" = "waiting for database" ] || fail "state while refusing: $state"
echo "ok   a database refusing connections: two FATALs, one waiting line, state '$state'"

psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "ALTER DATABASE later ALLOW_CONNECTIONS true" >/dev/null
harness_wait_for 20 grep -q 'database "later" allows connections now; restarting to connect to it' "$LOG"
id=$(psql -XAtq -v ON_ERROR_STOP=1 "$LATER_URL" -c "SELECT id FROM consumers.send_message(1, 'after the refusal')")
harness_wait_value 20 = 0 unsent
[ "$(rcli HGET "bull:chat-messages:$id" name)" = message.created ] || fail "job $id not in Redis"
[ "$(count "$refused")" = 2 ] || fail "FATALs after: $(count "$refused")"
echo "ok   relayed $id once the database allowed connections"
echo "PASS"
