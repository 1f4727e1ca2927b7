#!/usr/bin/env bash
# consumer.leases: consumers of one service share its partitions by leases. Four partitions of queue
# t-leases (layout key on shard 0) on two Redis shards (partition p on shard p mod 2), jobs added by a
# real bullmq Queue to t-leases-p<k> with chat k. Two daemons split the partitions. One is paused
# (SIGSTOP) past its lease ttl while working: the other takes its partitions over, and once resumed
# it finds its leases lost, stops, and gets its share back by a clean handover. It is then SIGKILLed
# mid-stream: the other takes over again (the takeover time is printed). Redis shard 1 is SIGKILLed and
# restarted: its partitions' leases are lost and taken again. A third joins and gets
# its share; the layout goes to two partitions and the daemons follow it; SIGTERM hands everything
# back: no job left active, no lease, no member left.
# Throughout, no partition's active jobs are locked by two daemons at once (one script per
# partition reads every lock atomically), and every job reaches the inbox once, in queue order per chat.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-leases
Q=t-leases
TTL=2000

# shard 1: a second Redis, stopped by pid on exit
R2_PORT=$(harness_free_port)
mkdir -p "$H_DIR/redis2"
r2_start() {
	redis-server --port "$R2_PORT" --bind 127.0.0.1 --dir "$H_DIR/redis2" --appendonly yes --save '' --daemonize yes \
		--pidfile "$H_DIR/redis2/redis.pid" --logfile "$H_DIR/redis2.log" >/dev/null
	harness_wait_for 10 redis-cli -p "$R2_PORT" ping
	harness_track "$(cat "$H_DIR/redis2/redis.pid")"
}
r2_start
R2_URL=redis://127.0.0.1:$R2_PORT
r2cli() { redis-cli -p "$R2_PORT" "$@"; }
shard_cli() { if [ $(($1 % 2)) = 0 ]; then rcli "${@:2}"; else r2cli "${@:2}"; fi; }
export CHAT_OUTBOXD_REDIS_URL="$REDIS_URL $R2_URL"

rcli SET "bull:$Q:partitions" 4 >/dev/null
add() { # add <count per partition>: appends each partition's new ids to ids-<k>.txt (the four at once)
	local pids=() k
	for k in 0 1 2 3; do
		if [ $((k % 2)) = 0 ]; then peer add "$Q-p$k" "$1" "$k"; else REDIS_URL=$R2_URL peer add "$Q-p$k" "$1" "$k"; fi \
			>>"$H_DIR/ids-$k.txt" &
		pids+=($!)
	done
	for k in "${pids[@]}"; do wait "$k" || fail "adding jobs failed"; done
}
lease() { local v; v=$(shard_cli "$1" GET "bull:$Q-p$1:lease"); echo "${v%#*}"; } # its identity (the value: <identity>#<token>)
held_by() { local n=0; for k in 0 1 2 3; do [ "$(lease $k)" != "$1" ] || n=$((n + 1)); done; echo $n; }
total() { cat "$H_DIR"/ids-*.txt | wc -l; }

# The watcher (leases_watch.mjs): every 50 ms, per partition, one script reads the owner of every active
# job's lock; two identities at once is a violation.
: >"$H_DIR/violations.txt"
node "$(dirname "$0")/leases_watch.mjs" "$Q" "$H_DIR/violations.txt" "$REDIS_URL" "$R2_URL" "$REDIS_URL" "$R2_URL" \
	>"$H_DIR/watch.log" 2>&1 &
harness_track $!

add 300
start() { # start <name>: a daemon with identity <name>; sets PID_<name>
	daemon_start "$1.log" --service workers --queue $Q --identity "$1" --batch-size 10 --lease-ttl $TTL
	eval "PID_$1=$DAEMON_PID"
}
start d1
start d2
harness_wait_value 30 -eq 2 held_by d1
harness_wait_value 30 -eq 2 held_by d2
echo "d1 and d2 hold two partitions each"
add 300
# mid-stream: wait for some of the new jobs, then freeze d1 with whatever it holds
harness_wait_value 30 -ge 1300 inbox_count workers

# SIGSTOP d1 past its lease ttl: d2 takes its partitions over (and takes back the jobs it held).
kill -STOP "$PID_d1"
harness_wait_value 30 -eq 4 held_by d2
add 100
kill -CONT "$PID_d1"
# d1 resumes: its leases are lost (logged), and the assignment gives it two partitions back
harness_wait_for 20 grep -q "lease lost" "$H_DIR/d1.log"
harness_wait_value 30 -eq 2 held_by d1
harness_wait_value 30 -eq 2 held_by d2
echo "d1 resumed after its leases expired: lost them, then got two back"
wait_inbox workers "$(total)" 30

# SIGKILL d1 mid-stream: d2 takes its partitions over once their leases expire.
add 300
harness_wait_value 30 -ge $(($(total) - 900)) inbox_count workers
kill -KILL "$PID_d1"
t0=$(date +%s%N)
harness_wait_value 30 -eq 4 held_by d2
echo "takeover after SIGKILL: $((($(date +%s%N) - t0) / 1000000)) ms (lease ttl $TTL ms)"
add 200
wait_inbox workers "$(total)" 30

# Redis shard 1 is SIGKILLed mid-stream for longer than the ttl and restarts from its AOF: d2 loses the
# leases of partitions 1 and 3 while it is down, and takes them again once it is back.
add 200
kill -KILL "$(cat "$H_DIR/redis2/redis.pid")"
harness_wait_for 20 grep -q "lease lost" "$H_DIR/d2.log"
r2_start
harness_wait_value 30 -eq 4 held_by d2
echo "shard 1 restarted: d2 holds all four again"
wait_inbox workers "$(total)" 30

# A third daemon joins: it gets its share, taken from d2 by a clean handover.
start d3
add 200
harness_wait_value 30 -eq 2 held_by d3
harness_wait_value 30 -eq 2 held_by d2
echo "after d3 joined: d2 holds 2, d3 holds 2"
wait_inbox workers "$(total)" 30

# The relay changes the layout to two partitions once the old queues are drained (here by hand): the
# daemons follow it, release partitions 2 and 3, and work t-leases-p0 and -p1 (chat k on k mod 2).
rcli SET "bull:$Q:partitions" 2 >/dev/null
gone_23() { [ -z "$(lease 2)$(lease 3)" ]; }
harness_wait_for 20 gone_23
harness_wait_value 20 -eq 1 held_by d2
harness_wait_value 20 -eq 1 held_by d3
echo "after the layout went to 2 partitions: d2 and d3 hold one each"
add2() { # the partitions of the two-partition layout, chats 0 and 1
	peer add "$Q-p0" "$1" 0 >>"$H_DIR/ids-0.txt" &
	local first=$!
	REDIS_URL=$R2_URL peer add "$Q-p1" "$1" 1 >>"$H_DIR/ids-1.txt"
	wait $first
}
add2 200
wait_inbox workers "$(total)" 30

# SIGTERM: both exit 0, releasing every lease and deregistering.
daemons_stop "$PID_d2" "$PID_d3"
for k in 0 1 2 3; do
	expect_eq "lease of partition $k after SIGTERM" "" "$(lease $k)"
	expect_eq "active jobs of partition $k" 0 "$(shard_cli $k LLEN "bull:$Q-p$k:active")"
	expect_eq "waiting jobs of partition $k" 0 "$(shard_cli $k LLEN "bull:$Q-p$k:wait")"
done
expect_eq "members left" 0 "$(rcli ZCARD "bull:$Q:members")"
expect_eq "partitions worked by two daemons at once" "" "$(sort -u "$H_DIR/violations.txt")"

expect_eq "inbox rows" "$(total)" "$(inbox_count workers)"
expect_eq "distinct inbox ids" "$(total)" "$(harness_psql "SELECT count(DISTINCT message_id) FROM workers.inbox")"
for k in 0 1 2 3; do
	harness_psql "SELECT message_id FROM workers.inbox WHERE chat_id = $k ORDER BY seq" >"$H_DIR/seq-$k.txt"
	expect_eq "chat $k: inbox order = queue order" "" "$(diff "$H_DIR/ids-$k.txt" "$H_DIR/seq-$k.txt" | head -3)"
done
echo "PASS"
