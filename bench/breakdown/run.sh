#!/usr/bin/env bash
# bench/breakdown/run.sh - the latency of one paced message, stage by stage (see probe.mjs).
# Starts PostgreSQL + Redis (tests/harness/lib.sh) and one daemon ($CHAT_OUTBOXD, default build/); prints
# medians in ms.
. "$(dirname "$0")/../../tests/harness/lib.sh"
harness_init bench-breakdown
harness_redis_start
harness_pg_start
export PORT=$(harness_free_port) REDIS_URL PGURL
"${CHAT_OUTBOXD:-$H_ROOT/build/daemon/chat-outboxd}" --service workers --queue chat-messages --listen 127.0.0.1:$PORT \
	--database-url "$PGURL" --redis-url "$REDIS_URL" --jwt-secret x --remove-on-complete -1 >"$H_DIR/daemon.log" 2>&1 &
harness_track $!
harness_wait_for 10 curl -sf http://127.0.0.1:$PORT/healthz
node "$(dirname "$0")/probe.mjs"
