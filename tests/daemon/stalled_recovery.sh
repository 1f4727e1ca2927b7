#!/usr/bin/env bash
# daemon.stalled_recovery: a consumer with another identity dies holding jobs (inbox written, not
# completed); our daemon's own stalled check (no bullmq Worker on the queue) requeues them once their
# lock expired, and they are processed without showing anything twice.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-stalled
Q=t-stalled
N=20

peer_bg events.log events $Q "$H_DIR/events.txt"
harness_wait_for 10 grep -q ready "$H_DIR/events.txt"
peer add $Q $N 3 >"$H_DIR/ids.txt"

daemon_start dead.log --service workers --queue $Q --identity dead --batch-size 5 --lock-duration 1000 --crash-after-inbox 1 \
	--stalled-interval 1000 # the stalled-check key is shared: a 30 s one would delay our check too
set +e; wait $DAEMON_PID; set -e
# it held the first batch (written, not completed) and the second (fetched during the first's write)
wait_counts $Q "c.active === 10" 5 >/dev/null

daemon_start alive.log --service workers --queue $Q --identity alive --batch-size 5 --lock-duration 4000 --stalled-interval 1000
wait_counts $Q "c.completed === $N && c.active === 0 && c.waiting === 0" 20 >/dev/null
expect_eq "inbox rows" $N "$(inbox_count workers)"
harness_wait_value 5 -ge 10 grep -c '^stalled ' "$H_DIR/events.txt"
expect_eq "stalled events" 10 "$(grep -c '^stalled ' "$H_DIR/events.txt")"
grep -q "stalled check requeued 10 job(s)" "$H_DIR/alive.log" || fail "no requeue line"
expect_eq "duplicates skipped" 5 "$(daemon_duplicates_logged alive.log)"
echo "PASS"
