#!/usr/bin/env bash
# consumer.poison_job: jobs whose data is not a chat message go to the failed set with a precise reason
# (QueueEvents sees `failed`), and the good jobs around them are still processed, in order.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-poison
Q=t-poison
G1=$(uuid); G2=$(uuid); P3=$(uuid)

peer_bg events.log events $Q "$H_DIR/events.txt"
harness_wait_for 10 grep -q ready "$H_DIR/events.txt"

peer add-raw $Q "$G1" "{\"id\":\"$G1\",\"chat_id\":1,\"body\":\"good 1\"}"
peer add-raw $Q bad-json 'not json {'
peer add-raw $Q no-chat "{\"id\":\"$P3\",\"body\":\"x\"}"
peer add-raw $Q bad-id '{"id":"123","chat_id":1,"body":"x"}'
peer add-raw $Q float-chat "{\"id\":\"$P3\",\"chat_id\":1.5,\"body\":\"x\"}"
peer add-raw $Q "$G2" "{\"id\":\"$G2\",\"chat_id\":\"1\",\"body\":\"good 2\"}"

daemon_start daemon.log --service workers --queue $Q
wait_counts $Q "c.completed === 2 && c.failed === 4 && c.active === 0 && c.waiting === 0" >/dev/null
expect_eq "good ones in order" "good 1,good 2" "$(harness_psql "SELECT string_agg(body, ',' ORDER BY seq) FROM workers.inbox")"
# raw reads: bullmq's getJob() itself throws on the non-JSON job
reason() {
	echo "$(rcli zscore "bull:$Q:failed" "$1" | sed 's/.\+/failed/'): $(rcli hget "bull:$Q:$1" failedReason)"
}
expect_eq "bad-json" "failed: invalid message: data is not valid JSON" "$(reason bad-json)"
expect_eq "no-chat" "failed: invalid message: chat_id missing" "$(reason no-chat)"
expect_eq "bad-id" "failed: invalid message: id is not a uuid string" "$(reason bad-id)"
expect_eq "float-chat" "failed: invalid message: chat_id is not an integer" "$(reason float-chat)"
harness_wait_value 10 -ge 4 grep -c '^failed ' "$H_DIR/events.txt"
expect_eq "QueueEvents failed" 4 "$(grep -c '^failed ' "$H_DIR/events.txt")"
expect_eq "QueueEvents errors" 0 "$(grep -c '^error' "$H_DIR/events.txt" || true)"

# still consuming afterwards
G3=$(uuid)
peer add-raw $Q "$G3" "{\"id\":\"$G3\",\"chat_id\":2,\"body\":\"good 3\"}"
wait_inbox workers 3 10

# a created_at that looks like ISO 8601 but Postgres rejects (Feb 31) must not hold the queue
G4=$(uuid)
peer add-raw $Q "$G4" "{\"id\":\"$G4\",\"chat_id\":2,\"body\":\"good 4\",\"created_at\":\"2026-02-31T00:00:00Z\"}"
wait_inbox workers 4 10

# The fetch reads only some fields of a job: an id in wait without a hash, and a legacy "0:" entry,
# are dropped instead of becoming phantom jobs (docs/protocols/bullmq.md, 'Fetching'); a hash without
# data fails.
# An older job of another worker at active's right end makes the complete remove ids one by one.
rcli HSET "bull:$Q:foreign-1" name message.created data '{}' >/dev/null
rcli SET "bull:$Q:foreign-1:lock" someone-else PX 600000 >/dev/null
rcli RPUSH "bull:$Q:active" foreign-1 >/dev/null
rcli HSET "bull:$Q:name-only" name message.created >/dev/null
G5=$(uuid)
rcli HSET "bull:$Q:$G5" name message.created data "{\"id\":\"$G5\",\"chat_id\":2,\"body\":\"good 5\"}" opts '{}' >/dev/null
rcli LPUSH "bull:$Q:wait" no-hash 0:123 name-only "$G5" >/dev/null
rcli ZADD "bull:$Q:marker" 0 0 >/dev/null
wait_inbox workers 5 10
wait_counts $Q "c.completed === 5 && c.failed === 5 && c.active === 1 && c.waiting === 0" >/dev/null
expect_eq "name-only" "failed: invalid message: data missing" "$(reason name-only)"
expect_eq "no phantom hash" 0 "$(rcli EXISTS "bull:$Q:no-hash" "bull:$Q:0:123")"
expect_eq "other worker's job still active" foreign-1 "$(rcli LRANGE "bull:$Q:active" 0 -1)"
expect_eq "good 5 completed" "{\"inserted\":true} 1" "$(rcli HMGET "bull:$Q:$G5" returnvalue ats | paste -sd " ")"
echo "PASS"
