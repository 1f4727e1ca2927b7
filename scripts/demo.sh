#!/usr/bin/env bash
# scripts/demo.sh - run chat_outbox locally and show messages flowing both ways.
#   scripts/demo.sh          install what is missing, build, start PostgreSQL + Redis under .run/,
#                            create the extension, start both daemons, send messages both ways,
#                            print the web client's two links (one per side)
#   scripts/demo.sh urls     print the two links again, with fresh tokens
#   scripts/demo.sh stop     stop everything the demo started
# Ports: PostgreSQL 54329, Redis 63799, chat-outboxd workers 8081, consumers 8082 (override with env).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUN=$ROOT/.run
PG_BIN=/usr/lib/postgresql/15/bin
PG_PORT=${PG_PORT:-54329}
REDIS_PORT=${REDIS_PORT:-63799}
WORKERS_PORT=${WORKERS_PORT:-8081}
CONSUMERS_PORT=${CONSUMERS_PORT:-8082}
SECRET_FILE=$RUN/jwt-secret

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

stop_all() {
	for d in workers consumers; do
		[ -f "$RUN/$d.pid" ] && kill "$(cat "$RUN/$d.pid")" 2>/dev/null && echo "stopped chat-outboxd $d"
		rm -f "$RUN/$d.pid"
	done
	if [ -f "$RUN/pg/postmaster.pid" ]; then as_pg "$PG_BIN/pg_ctl" -D "$RUN/pg" -m fast stop >/dev/null && echo "stopped postgres"; fi
	if [ -f "$RUN/redis/redis.pid" ]; then kill "$(cat "$RUN/redis/redis.pid")" 2>/dev/null && echo "stopped redis"; fi
	return 0
}

if [ "${1:-}" = stop ]; then stop_all; exit 0; fi
if [ "${1:-}" = urls ]; then
	[ -f "$SECRET_FILE" ] || { echo "the demo is not set up yet: run scripts/demo.sh" >&2; exit 1; }
	exec node scripts/demo-client.mjs --urls-only --secret "$(cat "$SECRET_FILE")" \
		--workers "http://127.0.0.1:$WORKERS_PORT" --consumers "http://127.0.0.1:$CONSUMERS_PORT"
fi

scripts/setup.sh
mkdir -p "$RUN/redis"
chmod 755 "$RUN"
[ -f "$SECRET_FILE" ] || head -c 32 /dev/urandom | base64 >"$SECRET_FILE"
chmod 600 "$SECRET_FILE"
SECRET=$(cat "$SECRET_FILE")

# Redis: appendonly yes + noeviction, the only configuration in which a queued message survives a restart.
if ! redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$RUN/redis" --appendonly yes \
		--maxmemory-policy noeviction --daemonize yes --pidfile "$RUN/redis/redis.pid" --logfile "$RUN/redis.log"
fi

# PostgreSQL 15 with the relay preloaded (initdb refuses root: the cluster belongs to "postgres").
if [ ! -f "$RUN/pg/PG_VERSION" ]; then
	mkdir -p "$RUN/pg"
	[ "$(id -u)" = 0 ] && chown postgres "$RUN/pg"
	as_pg "$PG_BIN/initdb" -D "$RUN/pg" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
	cat >>"$RUN/pg/postgresql.conf" <<CONF
port = $PG_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '/tmp'
shared_preload_libraries = 'chat_outbox'
chat_outbox.database = 'chat'
chat_outbox.redis_url = 'redis://127.0.0.1:$REDIS_PORT'
CONF
fi
touch "$RUN/postgres.log"
[ "$(id -u)" = 0 ] && chown postgres "$RUN/postgres.log"
if ! as_pg "$PG_BIN/pg_ctl" -D "$RUN/pg" status >/dev/null 2>&1; then
	as_pg "$PG_BIN/pg_ctl" -D "$RUN/pg" -l "$RUN/postgres.log" -w start >/dev/null
fi
PGURL="postgresql://postgres@127.0.0.1:$PG_PORT/chat"
psql -XAtq "postgresql://postgres@127.0.0.1:$PG_PORT/postgres" -c "SELECT 1 FROM pg_database WHERE datname='chat'" | grep -q 1 ||
	psql -XAtq "postgresql://postgres@127.0.0.1:$PG_PORT/postgres" -c "CREATE DATABASE chat"
psql -XAtq "$PGURL" -c "CREATE EXTENSION IF NOT EXISTS chat_outbox"

# One daemon per receiving service: Workers reads consumers' queue, Consumers reads workers' queue.
# Each also serves the web client (build/web, made by the CMake build) at /.
start_daemon() { # name queue port
	[ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null && return 0
	CHAT_OUTBOXD_JWT_SECRET=$SECRET build/daemon/chat-outboxd --service "$1" --queue "$2" \
		--listen "127.0.0.1:$3" --database-url "$PGURL" --redis-url "redis://127.0.0.1:$REDIS_PORT" \
		--web-root "$ROOT/build/web" >"$RUN/$1.log" 2>&1 &
	echo $! >"$RUN/$1.pid"
}
# Each page talks only to its own side's daemon; the two daemons share presence, typing, read receipts
# and "shown" through Redis (docs/client-protocol.md, "Conversations").
start_daemon workers chat-messages "$WORKERS_PORT"
start_daemon consumers chat-replies "$CONSUMERS_PORT"

node scripts/demo-client.mjs --pg "$PGURL" --secret "$SECRET" \
	--workers "http://127.0.0.1:$WORKERS_PORT" --consumers "http://127.0.0.1:$CONSUMERS_PORT"

cat <<EOF2

Running: PostgreSQL $PGURL, Redis redis://127.0.0.1:$REDIS_PORT,
         chat-outboxd workers http://127.0.0.1:$WORKERS_PORT, consumers http://127.0.0.1:$CONSUMERS_PORT
Try:     psql $PGURL -c "SELECT * FROM consumers.send_message(42, 'hello')"
         psql $PGURL -c "SELECT * FROM chat_outbox.status"
         curl -s http://127.0.0.1:$WORKERS_PORT/metrics
Logs:    .run/*.log          Stop: scripts/demo.sh stop
EOF2
