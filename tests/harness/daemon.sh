# tests/harness/daemon.sh - the one way the shell suites start chat-outboxd (loaded by lib.sh).
#   daemon_env <name>               harness_init + Redis + Postgres, then daemon_export_settings
#   daemon_export_settings          export the settings every daemon of this test shares, as the
#                                   daemon's own environment variables: CHAT_OUTBOXD_REDIS_URL,
#                                   _DATABASE_URL, _JWT_SECRET, _LOG_LEVEL (and CHAT_OUTBOXD, the
#                                   binary). Node launchers (tests/harness/daemon.mjs) and token
#                                   signers (tests/harness/jwt.mjs) read the same variables.
#   daemon_start <log> [flags...]   chat-outboxd in the background on a free port, output appended
#                                   to $H_DIR/<log>; sets DAEMON_PID, DAEMON_PORT, DAEMON_URL
#   daemon_start_again              the last daemon_start again: same log, flags and port
#   daemon_run <seconds> <log> [flags...]  in the foreground, stopped after <seconds>; returns
#                                   its exit status (for a daemon that must refuse to start)
#   daemon_wait_healthy             until $DAEMON_URL/healthz answers 200
#   daemon_wait_consuming <log>     until the daemon logged that it consumes
#   daemon_stop                     SIGTERM to $DAEMON_PID, wait up to 10 s; returns its exit status
#   daemons_stop <pid...>           SIGTERM to each at once; each must exit 0 within 20 s
#   daemon_duplicates_logged <log>  the duplicates the daemon's inbox commit lines report, summed
#   inbox_count <service>           rows in <service>.inbox
#   wait_inbox <service> <n> [s]    poll until the inbox holds n rows (default 30 s)
#   inbox_lock_hold <service>       a session of the test's holds the service's inbox lock ...
#   inbox_lock_release              ... until this (both use fd 7)
#   inbox_lock_waiters <service>    the service's daemon inbox connections waiting for an advisory lock
#   advisory_lock_holders           sessions holding an advisory lock (advisory_lock_sessions: who)
# Flags given to a launcher win over the shared environment (chat-outboxd reads flags last).

CHAT_OUTBOXD=${CHAT_OUTBOXD:-$H_ROOT/build/daemon/chat-outboxd}
export CHAT_OUTBOXD

daemon_env() {
	harness_init "$1"
	harness_redis_start
	harness_pg_start
	daemon_export_settings
}

daemon_export_settings() {
	CHAT_OUTBOXD_REDIS_URL=$REDIS_URL
	CHAT_OUTBOXD_DATABASE_URL=$PGURL
	# longer than the 32 bytes a verifier may ask of an HS256 secret
	CHAT_OUTBOXD_JWT_SECRET=chat-outbox-tests-jwt-secret-0123456789abcdef
	CHAT_OUTBOXD_LOG_LEVEL=verbose
	export REDIS_URL PGURL CHAT_OUTBOXD_REDIS_URL CHAT_OUTBOXD_DATABASE_URL CHAT_OUTBOXD_JWT_SECRET CHAT_OUTBOXD_LOG_LEVEL
}

daemon_start() {
	DAEMON_LOG=$1
	shift
	DAEMON_FLAGS=("$@")
	DAEMON_PORT=$(harness_free_port)
	DAEMON_URL=http://127.0.0.1:$DAEMON_PORT
	daemon_start_again
}

daemon_start_again() {
	"$CHAT_OUTBOXD" --listen "127.0.0.1:$DAEMON_PORT" "${DAEMON_FLAGS[@]}" >>"$H_DIR/$DAEMON_LOG" 2>&1 &
	DAEMON_PID=$!
	harness_track "$DAEMON_PID"
}

daemon_run() {
	local seconds=$1 log=$2
	shift 2
	timeout "$seconds" "$CHAT_OUTBOXD" --listen "127.0.0.1:$(harness_free_port)" "$@" >>"$H_DIR/$log" 2>&1
}

daemon_wait_healthy() { harness_wait_for 20 curl -sf -o /dev/null "$DAEMON_URL/healthz"; }

daemon_wait_consuming() { harness_wait_for 20 grep -q "consuming " "$H_DIR/$1"; }

daemon_gone() { ! kill -0 "$1" 2>/dev/null; }

daemon_stop() {
	kill -TERM "$DAEMON_PID"
	harness_wait_for 10 daemon_gone "$DAEMON_PID" || fail "chat-outboxd did not stop within 10 s of SIGTERM"
	wait "$DAEMON_PID"
}

daemons_stop() {
	local pid rc
	kill -TERM "$@"
	for pid in "$@"; do
		harness_wait_for 20 daemon_gone "$pid" || fail "chat-outboxd $pid did not stop within 20 s of SIGTERM"
		set +e; wait "$pid"; rc=$?; set -e
		expect_eq "exit code of $pid after SIGTERM" 0 "$rc"
	done
}

daemon_duplicates_logged() {
	sed -n 's/.*inbox commit: .* \([0-9]*\) duplicate(s).*/\1/p' "$H_DIR/$1" | paste -sd+ | bc
}

inbox_count() { harness_psql "SELECT count(*) FROM $1.inbox"; }

# the inbox lock's key is the daemon's InboxLockKey (daemon/src/inbox/core/inbox_sql.hpp)
inbox_lock_hold() {
	mkfifo "$H_DIR/hold.fifo"
	psql -XAtq "$PGURL" <"$H_DIR/hold.fifo" >"$H_DIR/hold.out" 2>&1 &
	harness_track $!
	exec 7>"$H_DIR/hold.fifo"
	echo "BEGIN; SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('chat_outbox.inbox:$1')); SELECT 'held';" >&7
	harness_wait_for 10 grep -q held "$H_DIR/hold.out"
}
inbox_lock_release() {
	echo "COMMIT;" >&7
	exec 7>&-
}
inbox_lock_waiters() { harness_psql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'chat-outboxd $1 inbox' AND wait_event = 'advisory'"; }
advisory_lock_holders() { harness_psql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"; }
advisory_lock_sessions() { harness_psql "SELECT pid, state, wait_event, application_name FROM pg_stat_activity WHERE pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory')"; }

wait_inbox() {
	harness_wait_for "${3:-30}" harness_value_is -ge "$2" inbox_count "$1" || fail "$1.inbox has $(inbox_count "$1") rows, want $2"
}
