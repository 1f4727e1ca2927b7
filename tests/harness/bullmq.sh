# tests/harness/bullmq.sh - a real bullmq producer and observer on this test's Redis (loaded by lib.sh).
#   peer <args...>               tests/harness/bullmq_peer.mjs (add, add-raw, counts, job; see there)
#   peer_bg <log> <args...>      a long-running peer (events, worker), stopped by pid on exit
#   bullmq_js <queue> <js>       run an ES module snippet with `q` (a bullmq Queue on <queue>) and
#                                `msg(n)` (a fresh chat message) in scope; the queue is closed after
#   wait_counts <queue> <expr> [s]  poll getJobCounts() until the JS expression over `c` is true
#                                (default 30 s); prints the counts
#   uuid                         a fresh message id
# They reach Redis through $REDIS_URL.
B_PEER=$H_ROOT/tests/harness/bullmq_peer.mjs

peer() { node "$B_PEER" "$@"; }

peer_bg() {
	local log=$1
	shift
	node "$B_PEER" "$@" >"$H_DIR/$log" 2>&1 &
	harness_track $!
}

bullmq_js() {
	(cd "$H_ROOT/tests/harness" && node --input-type=module -e "
const { Queue } = await import('bullmq');
const u = new URL(process.env.REDIS_URL);
const q = new Queue('$1', { connection: { host: u.hostname, port: +u.port } });
const msg = (n) => ({ id: crypto.randomUUID(), chat_id: 7, body: 'm' + n });
$2
await q.close();
")
}

uuid() { node -e 'console.log(crypto.randomUUID())'; }

wait_counts() {
	local deadline=$(($(date +%s) + ${3:-30})) c
	while true; do
		c=$(peer counts "$1")
		if node -e "const c=$c; process.exit(($2) ? 0 : 1)"; then
			echo "$c"
			return 0
		fi
		[ "$(date +%s)" -lt "$deadline" ] || fail "counts $c never satisfied $2"
		sleep 0.2
	done
}
