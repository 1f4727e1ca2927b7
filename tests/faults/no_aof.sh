#!/usr/bin/env bash
# tests/faults/no_aof.sh - what Redis without appendonly loses, next to the same run with it.
#
# Jobs relayed to Redis while the receiving daemon is down wait in Redis; a Redis restart without
# AOF forgets them, though the outbox already marked them sent. The run: stop the daemon, send 5,
# wait until the relay has moved them to Redis, restart Redis (SIGKILL, as a crash), start the daemon,
# send a 6th. Because the daemon works in queue order, once msg 6 is in the inbox everything before
# it that still existed in Redis is too. With appendonly yes all 6 arrive; with appendonly no only
# msg 6 does. It also checks that the relay and the daemon warn about appendonly no.
. "$(dirname "$0")/../harness/lib.sh"
harness_init faults-no-aof

run() { # run <appendonly yes|no> -> sets RECEIVED WARNED_RELAY WARNED_DAEMON
	local aof=$1
	REDIS_EXTRA_ARGS="--appendonly $aof --appendfsync always" harness_redis_start_again
	daemon_start "daemon-$aof.log" --service workers --queue chat-messages --identity no-aof
	daemon_wait_healthy
	kill $DAEMON_PID; wait $DAEMON_PID || true
	local chat=$((RANDOM + 1000))
	for i in 1 2 3 4 5; do harness_psql "SELECT 1 FROM consumers.send_message($chat, 'msg $i')" >/dev/null; done
	harness_wait_value 20 = 0 harness_psql 'SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL'
	harness_wait_value 20 -ge 5 rcli llen bull:chat-messages:wait
	harness_redis_kill
	REDIS_EXTRA_ARGS="--appendonly $aof --appendfsync always" harness_redis_start_again
	daemon_start_again
	daemon_wait_healthy
	harness_psql "SELECT 1 FROM consumers.send_message($chat, 'msg 6')" >/dev/null
	harness_wait_value 30 = 1 harness_psql "SELECT count(*) FROM workers.inbox WHERE chat_id = $chat AND body = 'msg 6'"
	kill $DAEMON_PID; wait $DAEMON_PID || true
	local received
	received=$(harness_psql "SELECT count(*) FROM workers.inbox WHERE chat_id = $chat")
	local wr=0 wd=0
	grep -qi "appendonly" "$H_DIR/postgres.log" && wr=1
	grep -qi "appendonly" "$H_DIR/daemon-$aof.log" && wd=1
	harness_redis_stop
	RECEIVED=$received WARNED_RELAY=$wr WARNED_DAEMON=$wd
}

REDIS_PORT=$(harness_free_port)
REDIS_DIR=$H_DIR/redis
REDIS_PIDFILE=$REDIS_DIR/redis.pid
REDIS_URL=redis://127.0.0.1:$REDIS_PORT
mkdir -p "$REDIS_DIR"
harness_pg_start
daemon_export_settings
run yes
with_aof=$RECEIVED wd_yes=$WARNED_DAEMON
rm -rf "${REDIS_DIR:?}"/*
run no
without_aof=$RECEIVED wr_no=$WARNED_RELAY wd_no=$WARNED_DAEMON

echo "appendonly yes: received $with_aof of 6 after a Redis crash"
echo "appendonly no:  received $without_aof of 6 after a Redis crash (lost $((6 - without_aof)))"
echo "warned about appendonly no: relay $([ "$wr_no" = 1 ] && echo yes || echo NO), daemon $([ "$wd_no" = 1 ] && echo yes || echo NO)"
[ "$with_aof" = 6 ] || fail "with AOF every message must survive"
[ "$without_aof" = 1 ] || fail "expected exactly msg 6 to survive without AOF"
[ "$wr_no" = 1 ] && [ "$wd_no" = 1 ] || fail "relay and daemon must warn about appendonly no"
[ "$wd_yes" = 0 ] || fail "the daemon warned although appendonly was yes"
echo PASS
