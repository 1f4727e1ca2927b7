#!/usr/bin/env bash
# consumer.mixed_pool: a real bullmq Worker (concurrency 2) and chat-outboxd share one queue of 1,000
# jobs: every job is processed by exactly one of them, and getJobCounts() shows all completed.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-mixed
Q=t-mixed
N=1000

peer_bg worker.log worker $Q 2 "$H_DIR/worker.txt"
harness_wait_for 10 grep -q ready "$H_DIR/worker.txt"
daemon_start daemon.log --service workers --queue $Q --batch-size 10
daemon_wait_consuming daemon.log

peer add $Q $N 4 >"$H_DIR/ids.txt"
wait_counts $Q "c.completed === $N && c.active === 0 && c.waiting === 0 && c.failed === 0" 60 >/dev/null

grep -v ready "$H_DIR/worker.txt" | sort >"$H_DIR/by-worker.txt"
harness_psql "SELECT message_id FROM workers.inbox" | sort >"$H_DIR/by-daemon.txt"
w=$(wc -l <"$H_DIR/by-worker.txt"); d=$(wc -l <"$H_DIR/by-daemon.txt")
echo "bullmq Worker processed $w, chat-outboxd $d"
expect_eq "processed once in total" $N $((w + d))
expect_eq "worker processed none twice" "$w" "$(uniq <"$H_DIR/by-worker.txt" | wc -l)"
expect_eq "processed by both" "" "$(comm -12 "$H_DIR/by-worker.txt" "$H_DIR/by-daemon.txt" | head -3)"
expect_eq "all ids" "" "$(sort "$H_DIR/ids.txt" | comm -3 - <(sort "$H_DIR/by-worker.txt" "$H_DIR/by-daemon.txt") | head -3)"
[ "$d" -gt 0 ] && [ "$w" -gt 0 ] || fail "one side took nothing"
echo "PASS"
