#!/usr/bin/env bash
# tests/ha/sentinel_shard.sh - a redis-sentinel:// URL as one element of the extension relay's
# two-shard list (chat_outbox.redis_url = "<plain shard 0> <sentinel URL of shard 1>"):
#   1. a service of 2 partitions: partition 0's jobs go to the plain shard 0, partition 1's to the
#      master the sentinels name for shard 1 (and the relay logs that master once, naming the shard).
#   2. redis_min_replicas = 1 while only shard 1 has a replica: a pass that wrote to both shards is
#      rolled back although shard 1 has its replica (its rows stay unsent); once shard 0 has a
#      replica too, they go, each job once.
# In this file rcli is shard 1's master (sentinel_env) and rcli1 the plain shard 0 (shards.sh).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/sentinel.sh"
. "$H_ROOT/tests/harness/shards.sh"
sentinel_env ha-sentinel-shard
SENTINEL_URL=$REDIS_URL
shard1_start
REDIS_URL="$SHARD1_URL $SENTINEL_URL" harness_pg_start "" "chat_outbox.redis_timeout = 1000"

unsent() { q "SELECT count(*) FROM split.outbox WHERE sent_at IS NULL"; }
send() { q "SELECT split.send_message(c, c || ':$1') FROM unnest('{0,1,2,3}'::bigint[]) AS c" >/dev/null; }

# 1. each partition on its shard, shard 1 found through its sentinels
q "SELECT chat_outbox.create_service('split', queue => 'split-q', partitions => 2)" >/dev/null
send 1
harness_wait_value 30 -eq 2 rcli LLEN bull:split-q-p1:wait || fail "partition 1 on shard 1's master: $(rcli LLEN bull:split-q-p1:wait) of 2"
harness_wait_value 30 -eq 2 rcli1 LLEN bull:split-q-p0:wait || fail "partition 0 on shard 0: $(rcli1 LLEN bull:split-q-p0:wait) of 2"
expect_eq "partition 1 not on shard 0" 0 "$(rcli1 EXISTS bull:split-q-p1:wait)"
expect_eq "partition 0 not on shard 1" 0 "$(rcli EXISTS bull:split-q-p0:wait)"
n=$(grep -c "redis master \"mymaster\" (shard 1) is at 127.0.0.1:$REDIS_PORT" "$H_DIR/postgres.log" || true)
expect_eq "log lines naming shard 1's master" 1 "$n"
echo "ok   2 partitions: partition 0 on the plain shard 0, partition 1 on the master shard 1's sentinels name"

# 2. WAIT on every shard the pass wrote to
q "ALTER SYSTEM SET chat_outbox.redis_min_replicas = 1"
q "SELECT pg_reload_conf()" >/dev/null
send 2
too_few() { q "SELECT last_error FROM chat_outbox.status WHERE service = 'split'" | grep "shard 0: WAIT: 0 of 1 replicas" >/dev/null; }
harness_wait_for 30 too_few || fail "last_error: $(q "SELECT last_error FROM chat_outbox.status WHERE service = 'split'")"
expect_eq "rows of a pass shard 0's replicas did not acknowledge" 4 "$(unsent)"
echo "ok   redis_min_replicas = 1, shard 0 without a replica: the pass is rolled back, its 4 rows stay unsent"
port=$(harness_free_port)
redis_start_node "$port" "$H_DIR/redis-$port" --replicaof 127.0.0.1 "$SHARD1_PORT"
harness_wait_value 30 -eq 0 unsent || fail "$(unsent) rows unsent after shard 0 got a replica"
expect_eq "partition 1's jobs on shard 1" 4 "$(rcli LLEN bull:split-q-p1:wait)"
expect_eq "partition 0's jobs on shard 0" 4 "$(rcli1 LLEN bull:split-q-p0:wait)"
echo "ok   shard 0 has a replica: the rows went, each job once"
echo PASS
