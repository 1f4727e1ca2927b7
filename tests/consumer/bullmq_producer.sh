#!/usr/bin/env bash
# consumer.bullmq_producer: jobs written by a real bullmq Queue.add/addBulk are consumed by chat-outboxd:
# one inbox row per job, in queue order (seq), getJobCounts() all completed, QueueEvents saw each `completed`.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-bullmq-producer
Q=t-producer
N=300

peer_bg events.log events $Q "$H_DIR/events.txt"
harness_wait_for 10 grep -q ready "$H_DIR/events.txt"

peer add $Q $N 11 >"$H_DIR/ids.txt"
expect_eq "ids added" $N "$(wc -l <"$H_DIR/ids.txt")"

daemon_start daemon.log --service workers --queue $Q --batch-size 50
daemon_wait_consuming daemon.log
wait_inbox workers $N
wait_counts $Q "c.completed === $N && c.active === 0 && c.waiting === 0 && c.failed === 0" >/dev/null

# queue order: seq order equals the order the producer added the ids
harness_psql "SELECT message_id FROM workers.inbox ORDER BY seq" >"$H_DIR/seq.txt"
expect_eq "inbox order = queue order" "" "$(diff "$H_DIR/ids.txt" "$H_DIR/seq.txt" | head -3)"
expect_eq "bodies" "m0 m1 m299" "$(harness_psql "SELECT string_agg(body, ' ' ORDER BY seq) FROM workers.inbox WHERE body IN ('m0','m1','m299')")"

deadline=$(($(date +%s) + 20))
until [ "$(grep -c '^completed ' "$H_DIR/events.txt")" -ge $N ] || [ "$(date +%s)" -ge $deadline ]; do sleep 0.1; done
expect_eq "QueueEvents completed (distinct ids)" $N "$(grep '^completed ' "$H_DIR/events.txt" | sort -u | wc -l)"
expect_eq "QueueEvents errors" 0 "$(grep -c '^error' "$H_DIR/events.txt" || true)"
expect_eq "returnvalue" '{"state":"completed","returnvalue":{"inserted":true},"attemptsMade":1}' \
	"$(peer job $Q "$(head -1 "$H_DIR/ids.txt")")"
echo "PASS"
