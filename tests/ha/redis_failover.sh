#!/usr/bin/env bash
# tests/ha/redis_failover.sh - the Redis master SIGKILLed mid-stream under Sentinel: the relay in
# Postgres and chat-outboxd follow the failover with no restart, and a socket.io client is shown
# every message once and in order. See redis_failover.mjs. HA_MIN_REPLICAS (default 1) sets
# chat_outbox.redis_min_replicas; with 0 the messages the dead master alone held are lost.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/sentinel.sh"
sentinel_env ha-redis-failover
# the same settings for the extension's relay and, in managed mode, for chat-outbox-relay
export CHAT_OUTBOX_RELAY_REDIS_MIN_REPLICAS=${HA_MIN_REPLICAS:-1} CHAT_OUTBOX_RELAY_REDIS_TIMEOUT=1000
harness_pg_start "" "chat_outbox.redis_min_replicas = ${HA_MIN_REPLICAS:-1}" "chat_outbox.redis_timeout = 1000"
daemon_export_settings
export SENTINEL_MASTER_CMD="redis-cli -p ${SENTINEL_PORTS%% *} SENTINEL get-master-addr-by-name mymaster"
export MASTER_START="$HARNESS_REDIS_SERVER --port $REDIS_PORT --bind 127.0.0.1 --dir $REDIS_DIR --appendonly yes --appendfsync everysec --maxmemory-policy noeviction --save '' --pidfile $REDIS_DIR/redis.pid --logfile $REDIS_DIR/redis.log --daemonize yes"
cd "$(dirname "$0")"
DAEMON_PORT=$(harness_free_port) node redis_failover.mjs 2>>"$H_DIR/daemon.log"
# the relay (in the Postgres log, or chat-outbox-relay's) logged the failover once, not once per attempt
n=$(cat "$H_DIR"/postgres.log "$H_DIR"/relay-*.log 2>/dev/null |
	grep -c "redis master .mymaster. is at 127.0.0.1:$REPLICA_PORT, was 127.0.0.1:$REDIS_PORT" || true)
expect_eq "relay log lines naming the new master" 1 "$n"
