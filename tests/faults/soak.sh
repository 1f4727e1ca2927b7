#!/usr/bin/env bash
# tests/faults/soak.sh - the chaos soak (see soak.mjs). CI runs a short one; for longer:
#   tests/faults/soak.sh --seconds 1800 [--seed N]
. "$(dirname "$0")/../harness/lib.sh"
harness_init faults-soak
harness_redis_start
harness_pg_start
export REDIS_PORT REDIS_URL REDIS_PIDFILE PGURL CHAT_OUTBOXD
export REDIS_START="redis-server --port $REDIS_PORT --bind 127.0.0.1 --dir $REDIS_DIR --appendonly yes --appendfsync everysec --maxmemory-policy noeviction --save '' --daemonize yes --pidfile $REDIS_PIDFILE --logfile $H_DIR/redis.log"
export PG_CTL="$( [ "$(id -u)" = 0 ] && echo "runuser -u $PG_USER --") $PG_BIN/pg_ctl -D $PG_DATA -l $H_DIR/postgres.log"
export DAEMON_PORTS="$(harness_free_port),$(harness_free_port)"
cd "$(dirname "$0")"
node soak.mjs --seconds 75 "$@" 2>>"$H_DIR/daemon.log"
