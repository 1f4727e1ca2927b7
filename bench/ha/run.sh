#!/usr/bin/env bash
# bench/ha/run.sh - failover figures (a benchmark, not a test; docs/journal/ha-failover.md has the results).
#
#   bench/ha/run.sh [redis|pg] [--failovers N] [--messages M]
#
# redis: a master, two replicas and three sentinels (down-after-milliseconds 1000); the relay and
#        chat-outboxd use the sentinel URL, chat_outbox.redis_min_replicas = 1. First the latency from
#        send_message's commit to a socket.io client, in blocks of M paced messages alternating
#        redis_min_replicas 0 and 1 (3 blocks each); then N times: SIGKILL the master while a sender
#        commits every 20 ms, and time until the first message committed after the kill is shown.
#        The killed node starts again (Sentinel makes it a replica) before the next round.
# pg:    a primary and a synchronous streaming standby; N times: stop the primary (immediate),
#        promote the standby at once (pg_ctl promote: no detection delay, which Patroni adds:
#        ttl/loop_wait), and time from the stop until the first message committed on the new
#        primary is in Redis (relayed) and shown to a client. The old primary is copied again from
#        the new one (pg_basebackup) as its standby before the next round.
# Without a mode, both. Prints p50 and max of each.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODE=all FAILOVERS=10 MESSAGES=200
while [ $# -gt 0 ]; do
	case $1 in
	redis | pg) MODE=$1; shift ;;
	--failovers) FAILOVERS=$2; shift 2 ;;
	--messages) MESSAGES=$2; shift 2 ;;
	*) echo "usage: $0 [redis|pg] [--failovers N] [--messages M]" >&2; exit 2 ;;
	esac
done
if [ "$MODE" = all ]; then
	"$0" redis --failovers "$FAILOVERS" --messages "$MESSAGES"
	"$0" pg --failovers "$FAILOVERS"
	exit
fi
. "$ROOT/tests/harness/lib.sh"
export FAILOVERS MESSAGES

if [ "$MODE" = redis ]; then
	SENTINEL_DOWN_AFTER_MS=${SENTINEL_DOWN_AFTER_MS:-1000} # the figures in docs/journal/ha-failover.md
	. "$ROOT/tests/ha/sentinel.sh"
	HA_REPLICAS=2 sentinel_env bench-ha-redis
	harness_pg_start "" "chat_outbox.redis_min_replicas = 1" "chat_outbox.redis_timeout = 1000"
	daemon_export_settings
	export H_DIR SENTINEL_PORTS
	DAEMON_PORT=$(harness_free_port) node "$ROOT/bench/ha/redis.mjs" 2>>"$H_DIR/daemon.log"
	exit
fi

. "$ROOT/tests/ha/standby.sh"
harness_init bench-ha-pg
harness_redis_start
harness_pg_start
STANDBY_PORT=$(harness_free_port)
standby_build "$H_DIR/standby" "$STANDBY_PORT" "$PG_PORT"
standby_sync "$PGURL"
daemon_export_settings
export CHAT_OUTBOXD_DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_PORT,127.0.0.1:$STANDBY_PORT/chat?target_session_attrs=read-write"
export NODES="$PG_DATA:$PG_PORT $H_DIR/standby:$STANDBY_PORT" AS_PG="$([ "$(id -u)" = 0 ] && echo "runuser -u $PG_USER --")" PG_BIN
DAEMON_PORT=$(harness_free_port) node "$ROOT/bench/ha/pg.mjs" 2>>"$H_DIR/daemon.log"
