#!/usr/bin/env bash
# consumer.sigterm: SIGTERM mid-stream exits 0 after finishing its batch (no job left active with our
# lock); a restart processes the rest; every job lands in the inbox exactly once. Idle, a job that
# arrives is stamped with the time it was fetched, and SIGTERM ends the wait for the next job at once.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-sigterm
Q=t-sigterm
N=3000

peer add $Q $N 8 >"$H_DIR/ids.txt"
daemon_start first.log --service workers --queue $Q --batch-size 50 --identity s1 --lock-duration 30000
harness_wait_value 20 -ge 200 inbox_count workers
kill -TERM "$DAEMON_PID"
set +e; wait "$DAEMON_PID"; rc=$?; set -e
expect_eq "exit code after SIGTERM" 0 "$rc"
c=$(peer counts $Q)
echo "after SIGTERM: $c, inbox $(inbox_count workers)"
node -e "const c=$c; process.exit(c.active === 0 ? 0 : 1)" || fail "jobs left active"
expect_eq "completed = inbox rows" "$(inbox_count workers)" "$(node -e "console.log(($c).completed)")"

daemon_start second.log --service workers --queue $Q --batch-size 50 --identity s1
wait_counts $Q "c.completed === $N && c.active === 0 && c.waiting === 0" 60 >/dev/null
expect_eq "inbox rows" $N "$(inbox_count workers)"
harness_psql "SELECT message_id FROM workers.inbox ORDER BY seq" >"$H_DIR/seq.txt"
expect_eq "inbox order = queue order" "" "$(diff "$H_DIR/ids.txt" "$H_DIR/seq.txt" | head -3)"

# Idle, the daemon has its next fetch queued behind its BZPOPMIN. That fetch runs when a job
# arrives, so it must stamp processedOn with the time it runs (Redis's clock), not the time it was
# queued: a job added after the daemon blocked would otherwise look processed before it existed.
idle_blocked() { rcli CLIENT LIST | grep 'cmd=bzpopmin' >/dev/null; }
harness_wait_for 20 idle_blocked
late=$(peer add $Q 1 8)
wait_counts $Q "c.completed === $N + 1 && c.active === 0" 30 >/dev/null
read -r ts processed <<<"$(rcli HMGET "bull:$Q:$late" timestamp processedOn | tr '\n' ' ')"
echo "late job: timestamp $ts processedOn $processed"
[ "$processed" -ge "$ts" ] || fail "processedOn $processed is before the job's timestamp $ts"
expect_eq "late job in the inbox" 1 "$(harness_psql "SELECT count(*) FROM workers.inbox WHERE message_id = '$late'")"

# SIGTERM while blocked: the stop unblocks the BZPOPMIN (CLIENT UNBLOCK) instead of waiting it out,
# and the fetch queued behind it answers before the daemon exits. The count starts here: the first
# run's SIGTERM also finds its daemon idle when it has drained the queue before the signal.
harness_wait_for 20 idle_blocked
rcli CONFIG RESETSTAT >/dev/null
kill -TERM "$DAEMON_PID"
set +e; wait "$DAEMON_PID"; rc=$?; set -e
expect_eq "exit code after SIGTERM while idle" 0 "$rc"
expect_eq "CLIENT UNBLOCK sent once" 1 "$(rcli INFO commandstats | sed -n 's/^cmdstat_client|unblock:calls=\([0-9]*\),.*/\1/p')"
expect_eq "no stop deadline hit" 0 "$(grep -c 'gave up waiting' "$H_DIR/second.log" || true)"
c=$(peer counts $Q)
node -e "const c=$c; process.exit(c.active === 0 && c.waiting === 0 ? 0 : 1)" || fail "after an idle SIGTERM: $c"
echo "PASS"
