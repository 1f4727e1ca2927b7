# tests/harness/shards.sh - a second Redis server, for suites with two shards (source it after lib.sh).
#   shard1_start          $HARNESS_REDIS_SERVER on $SHARD1_PORT (chosen once), appendonly yes; sets $SHARD1_URL
#   shard1_kill           SIGKILL (a crash); shard1_start brings it back on the same port and data
#   rcli1 <args...>       redis-cli against it
#   shard1_cmd            the command line that starts it (also for test peers to run)
# harness_redis_start's server is shard 0. Everything is stopped by pid on exit.
shard1_start() {
	SHARD1_PORT=${SHARD1_PORT:-$(harness_free_port)}
	SHARD1_DIR=$H_DIR/redis1
	mkdir -p "$SHARD1_DIR"
	SHARD1_URL=redis://127.0.0.1:$SHARD1_PORT
	eval "$(shard1_cmd)" >/dev/null
	harness_wait_for 10 rcli1 ping
	harness_track "$(cat "$SHARD1_DIR/redis.pid")"
}

shard1_cmd() {
	echo "$HARNESS_REDIS_SERVER --port $SHARD1_PORT --bind 127.0.0.1 --dir $SHARD1_DIR --appendonly yes --appendfsync everysec" \
		"--maxmemory-policy noeviction --save '' --daemonize yes --pidfile $SHARD1_DIR/redis.pid --logfile $H_DIR/redis1.log"
}

rcli1() { redis-cli -p "$SHARD1_PORT" "$@"; }

shard1_down() { ! rcli1 ping >/dev/null 2>&1; }

shard1_kill() {
	kill -9 "$(cat "$SHARD1_DIR/redis.pid")"
	harness_wait_for 10 shard1_down
}
