#!/usr/bin/env bash
# bench/breakdown/run.sh - the latency of one paced message, stage by stage (see probe.mjs).
# Starts PostgreSQL + Redis (tests/harness/lib.sh) and one daemon ($CHAT_OUTBOXD, default build/), waits for the
# relay, and prints medians in ms and the slowest 1% stage by stage (PROBE_COUNT messages, default 30).
. "$(dirname "$0")/../../tests/harness/lib.sh"
harness_init bench-breakdown
harness_redis_start
harness_pg_start
export PORT=$(harness_free_port) REDIS_URL PGURL JWT_SECRET=bench-breakdown-secret-of-32-bytes-or-more
"${CHAT_OUTBOXD:-$H_ROOT/build/daemon/chat-outboxd}" --service workers --queue chat-messages --listen 127.0.0.1:$PORT \
	--database-url "$PGURL" --redis-url "$REDIS_URL" --jwt-secret "$JWT_SECRET" --remove-on-complete -1 >"$H_DIR/daemon.log" 2>&1 &
harness_track $!
harness_wait_for 10 curl -sf http://127.0.0.1:$PORT/healthz
# the relay notices a new CREATE EXTENSION at its next check (up to 1 s): not a message's latency
relay_running() { [ "$(psql -XAtq "$PGURL" -c "SELECT relay_state FROM chat_outbox.status WHERE service = 'consumers'")" = running ]; }
harness_wait_for 10 relay_running
node "$(dirname "$0")/probe.mjs"
