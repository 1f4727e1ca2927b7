#!/usr/bin/env bash
# consumer.shard_durability: a daemon consuming from two shards warns about the one that can lose
# jobs. Shard 0 is durable; shard 1 runs with appendonly no. The daemon logs, once, that shard 1 is
# not durable (naming it) and nothing of shard 0, and exports chat_outboxd_redis_durable 0, while
# /healthz keeps shard 0's appendfsync. Once shard 1 is durable again and the daemon has
# reconnected to it, it says so once and the gauge is 1 again.
. "$(dirname "$0")/../harness/lib.sh"
. "$H_ROOT/tests/harness/shards.sh"
daemon_env daemon-shard-durability
shard1_start
rcli1 CONFIG SET appendonly no >/dev/null
LOG=$H_DIR/workers.log
durable_gauge() { curl -s "$DAEMON_URL/metrics" | sed -n 's/^chat_outboxd_redis_durable //p'; }

daemon_start workers.log --service workers --queue chat-messages --redis-url "$REDIS_URL $SHARD1_URL"
daemon_wait_healthy
harness_wait_for 20 grep -q 'redis shard 1 is not durable: appendonly is "no"' "$LOG" ||
	fail "no warning about shard 1: $(grep -i durable "$LOG")"
harness_wait_value 10 = 0 durable_gauge || fail "chat_outboxd_redis_durable $(durable_gauge) with shard 1 not durable"
grep -q 'redis shard 0 is not durable' "$LOG" && fail "shard 0 is durable but was warned about"
curl -s "$DAEMON_URL/healthz" | grep -q '"redis_appendfsync":"everysec"' || fail "healthz: $(curl -s "$DAEMON_URL/healthz")"
echo "ok   shard 1 without AOF: warned by name, chat_outboxd_redis_durable 0"

rcli1 CONFIG SET appendonly yes >/dev/null
harness_wait_for 10 bash -c "redis-cli -p $SHARD1_PORT INFO persistence | grep -q 'aof_rewrite_in_progress:0'"
rcli1 CLIENT KILL TYPE normal >/dev/null # every connection of the daemon's reconnects and is checked again
harness_wait_for 20 grep -q 'redis shard 1 is durable again' "$LOG" || fail "no notice that shard 1 is durable again"
harness_wait_value 10 = 1 durable_gauge || fail "chat_outboxd_redis_durable $(durable_gauge) once every shard is durable"
[ "$(grep -c 'is not durable' "$LOG")" = 1 ] || fail "warnings: $(grep -c 'is not durable' "$LOG") (one expected)"
echo "ok   shard 1 durable again: said once, chat_outboxd_redis_durable 1"
daemon_stop
echo PASS
