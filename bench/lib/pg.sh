# bench/lib/pg.sh - the benchmark's PostgreSQL start, on top of tests/harness/lib.sh.
# Source after lib.sh and harness_init.
#
#   bench_pg_start [port]   initdb + start like harness_pg_start, but:
#     - loads chat_outbox (shared_preload_libraries) only when its library is installed,
#     - creates databases "chat" and "baseline",
#     - tries CREATE EXTENSION chat_outbox (VERSION $BENCH_EXT_VERSION when set) in "chat" and sets
#       OURS_EXT=1 on success, 0 otherwise
#       (never fails because the extension is missing),
#     - tries CREATE EXTENSION pgq in "baseline" (Debian's postgresql-15-pgq3) with queue
#       consumers_outbox and consumer relay, and sets PGQ_EXT the same way (the "pgq" variant).
#   Sets PG_PORT, PGURL (database chat), BASELINE_URL (database baseline), OURS_EXT.

bench_pg_start() {
	PG_PORT=${1:-${PG_PORT:-$(harness_free_port)}}
	PG_DATA=$H_DIR/pgdata
	PG_SOCKDIR=$H_SOCK # short: a socket path may not exceed 107 bytes
	local pkglib preload=""
	pkglib=$("$PG_BIN/pg_config" --pkglibdir 2>/dev/null || pg_config --pkglibdir)
	if [ -f "$pkglib/chat_outbox.so" ]; then preload=chat_outbox; fi
	harness_initdb "$PG_DATA"
	{
		echo "port = $PG_PORT"
		echo "listen_addresses = '127.0.0.1'"
		echo "unix_socket_directories = '$PG_SOCKDIR'"
		if [ -n "$preload" ]; then
			echo "shared_preload_libraries = '$preload'"
			echo "chat_outbox.database = 'chat'"
			echo "chat_outbox.redis_url = '${REDIS_URL:-redis://127.0.0.1:6379}'"
		fi
		echo "max_connections = 400"
		echo "shared_buffers = 256MB"
		echo "fsync = on"
		echo "log_line_prefix = '%m [%p] %b '"
		for line in "${BENCH_PG_CONF[@]:-}"; do [ -n "$line" ] && echo "$line"; done
	} >>"$PG_DATA/postgresql.conf"
	harness_pg_ctl -w start >/dev/null
	PGURL="postgresql://postgres@127.0.0.1:$PG_PORT/chat"
	BASELINE_URL="postgresql://postgres@127.0.0.1:$PG_PORT/baseline"
	export PGURL PG_PORT BASELINE_URL
	harness_as_pg "$PG_BIN/psql" -XAtq -h "$PG_SOCKDIR" -p "$PG_PORT" -U postgres -d postgres \
		-c "CREATE DATABASE chat" -c "CREATE DATABASE baseline" >/dev/null
	OURS_EXT=0
	OURS_EXT_ERROR=""
	if [ -z "$preload" ]; then
		OURS_EXT_ERROR="chat_outbox.so not installed in $pkglib"
	elif OURS_EXT_ERROR=$(psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" \
		-c "CREATE EXTENSION chat_outbox${BENCH_EXT_VERSION:+ VERSION '$BENCH_EXT_VERSION'}" 2>&1); then
		OURS_EXT=1
	fi
	export OURS_EXT OURS_EXT_ERROR
	# ticker_max_count 1: any new event makes the relay's pgq.ticker() call close a tick, so a batch
	# is ready at once (PgQ's default, 500 events or 3 s, is tuned for throughput, not latency)
	PGQ_EXT=0
	if PGQ_EXT_ERROR=$(psql -XAtq -v ON_ERROR_STOP=1 "$BASELINE_URL" -c "CREATE EXTENSION pgq" \
		-c "SELECT pgq.create_queue('consumers_outbox')" -c "SELECT pgq.set_queue_config('consumers_outbox', 'ticker_max_count', '1')" \
		-c "SELECT pgq.register_consumer('consumers_outbox', 'relay')" 2>&1); then
		PGQ_EXT=1
	fi
	export PGQ_EXT PGQ_EXT_ERROR
}
