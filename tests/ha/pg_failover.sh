#!/usr/bin/env bash
# tests/ha/pg_failover.sh - the Postgres primary stopped (immediate) with a synchronous streaming
# standby: the relay waits on the standby (chat_outbox.status says `standby`), the standby is promoted
# (pg_ctl promote), its relay starts relaying, and chat-outboxd, given both servers with
# target_session_attrs=read-write, reconnects to it. See pg_failover.mjs.
. "$(dirname "$0")/../harness/lib.sh"
harness_init ha-pg-failover
harness_redis_start
harness_pg_start
STANDBY_PORT=$(harness_free_port)
STANDBY_DATA=$H_DIR/standby
ha_cleanup() {
	local rc=$?
	set +e
	harness_as_pg "$PG_BIN/pg_ctl" -D "$STANDBY_DATA" -m immediate stop >/dev/null 2>&1
	(exit $rc) # harness_cleanup reports this status
	harness_cleanup
}
trap ha_cleanup EXIT
harness_as_pg "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$PG_PORT" -U postgres -D "$STANDBY_DATA" -R -X stream -c fast \
	>"$H_DIR/basebackup.log" 2>&1
# the copy's postgresql.conf is the primary's; a later line wins
echo "port = $STANDBY_PORT" >>"$STANDBY_DATA/postgresql.conf"
harness_as_pg "$PG_BIN/pg_ctl" -D "$STANDBY_DATA" -l "$H_DIR/standby.log" -w start >/dev/null
# commits wait until the standby has flushed them: a committed send survives the primary's loss.
# Set on the primary only (ALTER SYSTEM after the copy): the promoted standby has no standby to wait for.
harness_psql "ALTER SYSTEM SET synchronous_standby_names = '*'" >/dev/null
harness_psql "SELECT pg_reload_conf()" >/dev/null
harness_wait_value 20 = sync harness_psql "SELECT sync_state FROM pg_stat_replication"
daemon_export_settings
export STANDBY_URL="postgresql://postgres@127.0.0.1:$STANDBY_PORT/chat"
export CHAT_OUTBOXD_DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_PORT,127.0.0.1:$STANDBY_PORT/chat?target_session_attrs=read-write"
export PG_STOP_PRIMARY="$([ "$(id -u)" = 0 ] && echo "runuser -u $PG_USER --") $PG_BIN/pg_ctl -D $PG_DATA -m immediate stop"
export PG_PROMOTE_STANDBY="$([ "$(id -u)" = 0 ] && echo "runuser -u $PG_USER --") $PG_BIN/pg_ctl -D $STANDBY_DATA -w promote"
cd "$(dirname "$0")"
DAEMON_PORT=$(harness_free_port) node pg_failover.mjs 2>>"$H_DIR/daemon.log"
# the standby said once that it waits, and once that it relays
expect_eq "standby log lines" 1 "$(grep -c 'this server is a standby; relaying starts when it is promoted' "$H_DIR/standby.log" || true)"
expect_eq "promotion log lines" 1 "$(grep -c 'this server was promoted; relaying' "$H_DIR/standby.log" || true)"
