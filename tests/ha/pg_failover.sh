#!/usr/bin/env bash
# tests/ha/pg_failover.sh - the Postgres primary stopped (immediate) with a synchronous streaming
# standby: the relay waits on the standby (chat_outbox.status says `standby`), the standby is promoted
# (pg_ctl promote), its relay starts relaying, and chat-outboxd, given both servers, reconnects to it.
# Its URL lists the standby first and says nothing of target_session_attrs: chat-outboxd asks libpq for
# a primary itself (common/process/pg_primary.hpp), so it skips the standby; without that it would take the
# standby and no inbox write would succeed. See pg_failover.mjs.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/standby.sh"
harness_init ha-pg-failover
harness_redis_start
harness_pg_start
STANDBY_PORT=$(harness_free_port)
STANDBY_DATA=$H_DIR/standby
standby_build "$STANDBY_DATA" "$STANDBY_PORT" "$PG_PORT"
# commits wait until the standby has flushed them: a committed send survives the primary's loss
standby_sync "$PGURL"
daemon_export_settings
export STANDBY_URL="postgresql://postgres@127.0.0.1:$STANDBY_PORT/chat"
export CHAT_OUTBOXD_DATABASE_URL="postgresql://postgres@127.0.0.1:$STANDBY_PORT,127.0.0.1:$PG_PORT/chat"
export PG_STOP_PRIMARY="$([ "$(id -u)" = 0 ] && echo "runuser -u $PG_USER --") $PG_BIN/pg_ctl -D $PG_DATA -m immediate stop"
export PG_START_PRIMARY="$([ "$(id -u)" = 0 ] && echo "runuser -u $PG_USER --") $PG_BIN/pg_ctl -D $PG_DATA -l $H_DIR/postgres.log -w start"
export PG_STOP_STANDBY="$([ "$(id -u)" = 0 ] && echo "runuser -u $PG_USER --") $PG_BIN/pg_ctl -D $STANDBY_DATA -m fast -w stop"
export PG_START_STANDBY="$([ "$(id -u)" = 0 ] && echo "runuser -u $PG_USER --") $PG_BIN/pg_ctl -D $STANDBY_DATA -l $STANDBY_DATA.log -w start"
export PG_PROMOTE_STANDBY="$([ "$(id -u)" = 0 ] && echo "runuser -u $PG_USER --") $PG_BIN/pg_ctl -D $STANDBY_DATA -w promote"
cd "$(dirname "$0")"
DAEMON_PORT=$(harness_free_port) node pg_failover.mjs 2>>"$H_DIR/daemon.log"
# the standby said once per start that it waits (built, after "in doubt A", after "in doubt B"), and once that it relays
expect_eq "standby log lines" 3 "$(grep -c 'this server is a standby; relaying starts when it is promoted' "$STANDBY_DATA.log" || true)"
expect_eq "promotion log lines" 1 "$(grep -c 'this server was promoted; relaying' "$STANDBY_DATA.log" || true)"
