#!/usr/bin/env bash
# consumer.stalled_recovery: jobs left active by a consumer that died come back without showing
# anything twice, by the two ways there are:
#   - a daemon with another identity dies holding jobs (inbox written, not completed): once its
#     lease expired, the daemon that takes the queue over takes them back before its first fetch
#     (at once, not after their --lock-duration);
#   - a bullmq Worker sharing the queue dies holding jobs: our daemon's own stalled check requeues
#     them once their lock expired (no live Worker runs a check).
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-stalled
Q=t-stalled
N=20

peer_bg events.log events $Q "$H_DIR/events.txt"
harness_wait_for 10 grep -q ready "$H_DIR/events.txt"
peer add $Q $N 3 >"$H_DIR/ids.txt"

daemon_start dead.log --service workers --queue $Q --identity dead --batch-size 5 --crash-after-inbox 1 \
	--lease-ttl 1000 --stalled-interval 1000 # the stalled-check key is shared: a 30 s one would delay our check too
set +e; wait $DAEMON_PID; set -e
# it held the first batch (written, not completed) and the second (fetched during the first's write)
wait_counts $Q "c.active === 10" 5 >/dev/null

daemon_start alive.log --service workers --queue $Q --identity alive --batch-size 5 --lease-ttl 1000 \
	--lock-duration 4000 --stalled-interval 1000
wait_counts $Q "c.completed === $N && c.active === 0 && c.waiting === 0" 20 >/dev/null
expect_eq "inbox rows" $N "$(inbox_count workers)"
grep -q "took back 10 job(s) left active by an earlier holder of $Q" "$H_DIR/alive.log" || fail "no takeover line"
expect_eq "stalled events (none: taken back by the takeover)" 0 "$(grep -c '^stalled ' "$H_DIR/events.txt" || true)"
expect_eq "duplicates skipped" 5 "$(daemon_duplicates_logged alive.log)"

# A bullmq Worker that never finishes its jobs holds 5 (the daemon stopped meanwhile, so it gets
# them); the daemon starts again beside it and leaves them alone (their locks are the Worker's and
# alive); then the Worker is SIGKILLed.
daemon_stop
(cd "$H_ROOT/tests/harness" && exec node --input-type=module -e "
const { Worker } = await import('bullmq');
const u = new URL(process.env.REDIS_URL);
const w = new Worker('$Q', () => new Promise(() => {}), { concurrency: 5, lockDuration: 1000, stalledInterval: 1000,
	connection: { host: u.hostname, port: +u.port, maxRetriesPerRequest: null } });
await w.waitUntilReady();
console.log('ready');
") >"$H_DIR/worker.log" 2>&1 &
WORKER_PID=$!
harness_track $WORKER_PID
harness_wait_for 10 grep -q ready "$H_DIR/worker.log"
peer add $Q $N 3 >>"$H_DIR/ids.txt"
wait_counts $Q "c.active === 5 && c.waiting === $N - 5" 20 >/dev/null
daemon_start_again
wait_counts $Q "c.completed === 2 * $N - 5 && c.active === 5" 20 >/dev/null
kill -KILL $WORKER_PID
wait_counts $Q "c.completed === 2 * $N && c.active === 0 && c.waiting === 0" 20 >/dev/null
expect_eq "inbox rows" $((2 * N)) "$(inbox_count workers)"
harness_wait_value 5 -ge 5 grep -c '^stalled ' "$H_DIR/events.txt"
expect_eq "stalled events" 5 "$(grep -c '^stalled ' "$H_DIR/events.txt")"
grep -q "stalled check requeued 5 job(s)" "$H_DIR/alive.log" || fail "no requeue line"
echo "PASS"
