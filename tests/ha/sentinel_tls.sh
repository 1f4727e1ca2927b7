#!/usr/bin/env bash
# tests/ha/sentinel_tls.sh - rediss-sentinel:// under a failover: a master, a replica and three
# sentinels that serve TLS only (certificates of the test's own CA, tests/ha/sentinel.sh with
# SENTINEL_TLS=1); the extension's relay and chat-outboxd reach the sentinels and the master they
# name over TLS. Messages flow; the master is SIGKILLed while messages are sent; both follow the
# failover to the promoted replica with no restart (the old master, started again, becomes its
# replica: chat_outbox.redis_min_replicas is 1); every message reaches workers.inbox once, in send
# order per chat, and the relay logs the new master once.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/sent_once.sh"
. "$(dirname "$0")/sentinel.sh"
SENTINEL_TLS=1 sentinel_env ha-sentinel-tls
[[ $REDIS_URL == rediss-sentinel://* ]] || fail "not a TLS sentinel URL: $REDIS_URL"
harness_pg_start "" "chat_outbox.redis_min_replicas = 1" "chat_outbox.redis_timeout = 1000"
daemon_export_settings
daemon_start workers.log --service workers --queue chat-messages
daemon_wait_consuming workers.log

sent_once_send 20
sent_once_verify "before the failover"
kill -9 "$(cat "$REDIS_PIDFILE")"
sent_once_send 20 # while the sentinels decide: these commit and wait in the outbox
harness_wait_value 30 = "$REPLICA_PORT" sentinel_master_port
# the old master back: the sentinels make it the new master's replica, so WAIT (redis_min_replicas 1) passes again
redis_start_node "$REDIS_PORT" "$REDIS_DIR"
sent_once_send 10
sent_once_verify "after the failover"
n=$(grep -c "redis master .mymaster. is at 127.0.0.1:$REPLICA_PORT, was 127.0.0.1:$REDIS_PORT" "$H_DIR/postgres.log" || true)
expect_eq "relay log lines naming the new master" 1 "$n"
harness_wait_value 20 = 0 relay_status unsent
echo "ok   rediss-sentinel://: $sent messages once, in order, through a master's SIGKILL"
