# tests/ha/standby.sh - a streaming standby of this test's Postgres (sourced after tests/harness/lib.sh).
#   standby_build <data dir> <port> <primary port>  pg_basebackup -R of the primary into <data dir>,
#                                       listening on <port>; started; stopped (immediate) on exit
#   standby_sync <primary url>          the primary waits for a standby's flush at every commit
#                                       (synchronous_standby_names = '*', via ALTER SYSTEM)
#   pg_ctl_at <data dir> <args...>      pg_ctl on that data dir as the servers' owner
# The copy never takes the primary's synchronous_standby_names: promoted, it has nobody to wait for.

STANDBY_DIRS=()

pg_ctl_at() {
	local data=$1
	shift
	harness_as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$data.log" "$@"
}

standby_cleanup() {
	local rc=$? data
	set +e
	for data in "${STANDBY_DIRS[@]}"; do pg_ctl_at "$data" -m immediate stop >/dev/null 2>&1; done
	(exit $rc) # harness_cleanup reports this status
	harness_cleanup
}

standby_build() {
	local data=$1 port=$2 from=$3
	rm -rf "$data"
	harness_as_pg "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$from" -U postgres -D "$data" -R -X stream -c fast \
		>>"$H_DIR/basebackup.log" 2>&1
	# the copy's postgresql.conf is the primary's: a later line wins
	echo "port = $port" >>"$data/postgresql.conf"
	sed -i '/^synchronous_standby_names/d' "$data/postgresql.auto.conf"
	STANDBY_DIRS+=("$data")
	trap standby_cleanup EXIT
	pg_ctl_at "$data" -w start >/dev/null
}

standby_sync() {
	psql -XAtq -v ON_ERROR_STOP=1 "$1" -c "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >/dev/null
	harness_wait_value 20 = sync psql -XAtq "$1" -c "SELECT sync_state FROM pg_stat_replication"
}
