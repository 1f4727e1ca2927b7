#!/usr/bin/env bash
# tests/gateway/memory_bounds.sh - one client never hurts another, and the daemon's memory stays
# bounded, when clients misbehave: several clients resume from seq 0 over 3,000 messages of 60 KB
# and never read, 5,000 Engine.IO handshakes never authenticate, one client sends as fast as it can
# (memory_bounds.mjs). The daemon's RSS must stay under the bound docs/gateway.md states, and a
# normal client in the same chat must still get every live message, in order.
. "$(dirname "$0")/gateway.sh"
# Long heartbeats: the clients that never read must stay connected for the whole test (a paused
# /ws client does not answer keepalive pings either).
# 3,000 messages of 60,000 bytes in chat 5, written before the daemon starts: history that clients
# replay, not news (a daemon pushes every inbox row committed above what it has pushed, whoever wrote it).
daemon_env gateway-memory
harness_psql "INSERT INTO workers.inbox (message_id, chat_id, body, created_at)
	SELECT gen_random_uuid(), 5, repeat(md5(i::text), 1875), now() FROM generate_series(1, 3000) i"
daemon_start daemon.log --service workers --queue chat-messages --ping-interval 60000 --ping-timeout 60000
export DAEMON_URL H_DIR DAEMON_PID
daemon_wait_healthy
cd "$(dirname "$0")"
node memory_bounds.mjs

# --query-queue: while Postgres holds the gateway's queries (a lock on the tables they use), sends
# beyond the queue are acked busy at once, and a replay waits for a slot instead of failing.
# --client-queue-bytes: a live client that stops reading falls behind and reads on from the inbox;
# one that keeps sending requests without reading the answers is closed "too slow".
daemon_stop
DAEMON_FLAGS+=(--query-queue 3 --client-queue-bytes 1048576 --catchup-page-bytes 262144)
daemon_start_again
daemon_wait_healthy
export DAEMON_PID
node query_queue.mjs
node join_flood.mjs
node behind.mjs
node too_slow.mjs
