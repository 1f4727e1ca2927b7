#!/usr/bin/env bash
# consumer.stop_during_restarts: a stop is exit 0 whatever Postgres, Redis and the clients are doing.
# A deploy restarts the daemon with its servers: SIGTERM reaches the daemon while Postgres restarts
# (immediate and fast), while Redis restarts (SIGKILL and SHUTDOWN), and while both do, with jobs
# flowing and clients connected that read slowly (Socket.IO over WebSocket and polling, two /ws
# clients catching up a backlog with their sockets paused). Every round must end with exit code 0; a
# round whose batch in flight was stuck gives it up after --stop-timeout (2 s here).
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-stop-during-restarts
Q=t-stop
ROUNDS=${ROUNDS:-1}
T_DIR=$(cd "$(dirname "$0")" && pwd)
health() { curl -s "$DAEMON_URL/healthz"; }

# A backlog the /ws clients replay from seq 0 while barely reading: the daemon holds their frames.
harness_psql "INSERT INTO workers.inbox (message_id, chat_id, body, created_at)
	SELECT gen_random_uuid(), 7, repeat('x', 2000), now() FROM generate_series(1, 3000)"

pg_down() { # immediate or fast
	harness_pg_ctl -m "$1" -w stop >/dev/null 2>&1 || true
}
pg_up() { harness_pg_ctl -w start >/dev/null; }
redis_down() { # kill or shutdown
	if [ "$1" = kill ]; then kill -9 "$(cat "$REDIS_PIDFILE")"; else redis-cli -p "$REDIS_PORT" shutdown >/dev/null 2>&1 || true; fi
}
redis_up() {
	harness_wait_for 10 bash -c "! redis-cli -p $REDIS_PORT ping"
	harness_redis_start_again
}

# stop_round <name> <lag> <what goes down...>: start the daemon, wait until it serves every client
# and consumes, then send SIGTERM <lag> seconds after the servers start going down (0: at once, so
# the stop and the lost connections interleave; later: the clients are already reconnecting), bring
# the servers back, and check the exit code.
round=0
stop_round() {
	local name=$1 lag=$2
	shift 2
	round=$((round + 1))
	local log=round$round-$name.log
	# every round on the same port, so the clients of one round could reach the next daemon too
	if [ "$round" = 1 ]; then
		daemon_start "$log" --service workers --queue $Q --batch-size 20 --identity stop --stop-timeout 2000
		export DAEMON_PORT
	else
		DAEMON_LOG=$log
		daemon_start_again
	fi
	daemon_wait_healthy # it admits clients once it has read the inbox; the never-reading client does not retry
	node "$T_DIR/slow_clients.mjs" 7 >>"$H_DIR/clients.log" 2>&1 &
	local clients=$!
	harness_track $clients
	harness_wait_for 30 bash -c "curl -s $DAEMON_URL/healthz | grep -q '\"redis\":true,\"postgres\":true,\"clients\":[4-9]'" ||
		{ echo "FAIL: round $round ($name): clients never all connected: $(health)" >&2; exit 1; }
	peer add $Q 400 7 >/dev/null
	harness_wait_for 20 grep -q 'consuming ' "$H_DIR/$log"
	local downs=()
	for what in "$@"; do
		case $what in
		pg-*) pg_down "${what#pg-}" & ;;
		redis-*) redis_down "${what#redis-}" & ;;
		esac
		downs+=($!)
	done
	sleep "$lag"
	kill -TERM "$DAEMON_PID"
	local deadline=$(($(date +%s) + 40))
	while kill -0 "$DAEMON_PID" 2>/dev/null; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "FAIL: round $round ($name): no exit 40 s after SIGTERM" >&2; exit 1; }
		sleep 0.1
	done
	# --stop-timeout 2000: a batch stuck on a down server is given up after 2 s, not the default 10 s. Read
	# from the daemon's own log lines (its timer, not how soon this loop saw the process gone).
	if grep -q "gave up waiting for the batch in flight" "$H_DIR/$log"; then
		local took
		took=$(awk '/received SIGTERM/ && !t { t = $3 } /gave up waiting for the batch in flight/ && !g { g = $3 }
			function s(x, p) { split(x, p, ":"); return p[1] * 3600 + p[2] * 60 + p[3] }
			END { printf "%d", s(g) - s(t) }' "$H_DIR/$log")
		[ "$took" -lt 10 ] || { echo "FAIL: round $round ($name): gave up ${took} s after SIGTERM, --stop-timeout is 2 s" >&2; exit 1; }
	fi
	set +e
	wait "$DAEMON_PID"
	local rc=$?
	set -e
	wait "${downs[@]}"
	kill "$clients"
	for what in "$@"; do
		case $what in
		pg-*) pg_up ;;
		redis-*) redis_up ;;
		esac
	done
	if [ "$rc" != 0 ]; then
		echo "FAIL: round $round ($name): exit code $rc after SIGTERM, want 0" >&2
		tail -n 20 "$H_DIR/$log" >&2
		exit 1
	fi
	echo "ok: round $round: SIGTERM ${lag}s into $name: exit 0"
}

for lag in 0 0.3; do
	for i in $(seq 1 "$ROUNDS"); do
		stop_round "a postgres immediate restart" $lag pg-immediate
		stop_round "a postgres fast restart" $lag pg-fast
		stop_round "a redis SIGKILL and restart" $lag redis-kill
		stop_round "a redis shutdown and restart" $lag redis-shutdown
		stop_round "postgres and redis restarts" $lag pg-immediate redis-kill
	done
done
echo "PASS"
