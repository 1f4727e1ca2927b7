# tests/daemon/daemon_lib.sh - helpers shared by the daemon's integration tests.
# Source after tests/harness/lib.sh:
#   daemon_env <name>              harness_init + Redis + Postgres (with the extension)
#   daemon_start <log> [args...]   start chat-outboxd in the background; sets $DAEMON_PID
#                                  (listens on $DAEMON_LISTEN when set, else on a free port)
#   daemon_wait_consuming <log>    until the daemon logged that it consumes
#   peer <args...>                 tests/daemon/bullmq_peer.mjs with REDIS_URL set (peer_bg: in the background)
#   inbox_count <service>          rows in <service>.inbox
#   expect_eq <what> <want> <got>  fail with a message unless equal
D_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CHAT_OUTBOXD=${CHAT_OUTBOXD:-$H_ROOT/build/daemon/chat-outboxd}
export NODE_PATH=$H_ROOT/tests/node_modules

daemon_env() {
	harness_init "$1"
	harness_redis_start
	harness_pg_start
	export REDIS_URL
	JWT_SECRET=test-secret
}

daemon_start() {
	local log=$1
	shift
	"$CHAT_OUTBOXD" --redis-url "$REDIS_URL" --database-url "$PGURL" --jwt-secret "$JWT_SECRET" \
		--listen "${DAEMON_LISTEN:-127.0.0.1:$(harness_free_port)}" --log-level verbose "$@" >>"$H_DIR/$log" 2>&1 &
	DAEMON_PID=$!
	harness_track "$DAEMON_PID"
}

daemon_wait_consuming() { harness_wait_for 20 grep -q "consuming " "$H_DIR/$1"; }

peer() { node "$D_DIR/bullmq_peer.mjs" "$@"; }

# peer_bg <log> <args...>: a long-running peer (events, worker), stopped by pid on exit
peer_bg() {
	local log=$1
	shift
	node "$D_DIR/bullmq_peer.mjs" "$@" >"$H_DIR/$log" 2>&1 &
	harness_track $!
}

inbox_count() { harness_psql "SELECT count(*) FROM $1.inbox"; }

expect_eq() {
	if [ "$2" != "$3" ]; then
		echo "FAIL: $1: want '$2', got '$3'" >&2
		exit 1
	fi
	echo "ok: $1 = $3"
}

# wait_inbox <service> <n> [seconds]: poll until the inbox holds n rows
wait_inbox() {
	local deadline=$(($(date +%s) + ${3:-30}))
	while [ "$(inbox_count "$1")" -lt "$2" ]; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "FAIL: $1.inbox has $(inbox_count "$1") rows, want $2" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# wait_counts <queue> <jq-like node expr> [seconds]: poll getJobCounts() until expr (over c) is true
wait_counts() {
	local deadline=$(($(date +%s) + ${3:-30})) c
	while true; do
		c=$(peer counts "$1")
		if node -e "const c=$c; process.exit(($2) ? 0 : 1)"; then
			echo "$c"
			return 0
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "FAIL: counts $c never satisfied $2" >&2
			exit 1
		fi
		sleep 0.2
	done
}
