#!/usr/bin/env bash
# consumer.bullmq_options: job options a real bullmq producer sets are honoured by the batched scripts:
# priorities (plain jobs first in FIFO order, then by priority, equal priorities FIFO), the daemon's
# keep-count for completed jobs (recent ones kept, the others' keys gone), a job's own
# removeOnComplete, and delayed jobs (plain and prioritized) promoted when due - across batches
# smaller than the queue.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-options
Q=t-options

producer() { bullmq_js $Q "$1"; }

# 13 plain jobs, 18 prioritized (3, 1, 2 repeating), 1 removed on completion: 32, 8 batches of 4
producer "
const plain = [], prio = [];
for (let i = 0; i < 13; i++) plain.push(msg(i));
for (let i = 0; i < 18; i++) prio.push({ m: msg(100 + i), p: [3, 1, 2][i % 3] });
for (const m of plain) await q.add('message.created', m, { jobId: m.id });
for (const { m, p } of prio) await q.add('message.created', m, { jobId: m.id, priority: p });
const gone = msg(200);
await q.add('message.created', gone, { jobId: gone.id, removeOnComplete: true });
const order = [...plain, gone, ...[1, 2, 3].flatMap((p) => prio.filter((x) => x.p === p).map((x) => x.m))];
console.log(JSON.stringify({ order: order.map((m) => m.id), gone: gone.id }));
" >"$H_DIR/plan.json"
node -e "console.log(require('$H_DIR/plan.json').order.join('\n'))" >"$H_DIR/expected.txt"
GONE=$(node -e "console.log(require('$H_DIR/plan.json').gone)")
N=$(wc -l <"$H_DIR/expected.txt")

daemon_start daemon.log --service workers --queue $Q --batch-size 4 --remove-on-complete 5
wait_inbox workers "$N" 30
wait_counts $Q "c.active === 0 && c.waiting === 0 && c.prioritized === 0 && c.completed === 5" 20 >/dev/null
harness_psql "SELECT message_id FROM workers.inbox ORDER BY seq" >"$H_DIR/got.txt"
expect_eq "inbox order = bullmq's order" "" "$(diff "$H_DIR/expected.txt" "$H_DIR/got.txt" | head -5)"

# delayed jobs are promoted when due and processed: a plain one to wait, a prioritized one (added
# after it, so due after it) to the prioritized set
producer "
const late = msg(300), latePrio = msg(301);
await q.add('message.created', late, { jobId: late.id, delay: 500 });
await q.add('message.created', latePrio, { jobId: latePrio.id, delay: 500, priority: 2 });
console.log(late.id + '\\n' + latePrio.id);" >>"$H_DIR/expected.txt"
wait_inbox workers $((N + 2)) 20
wait_counts $Q "c.active === 0 && c.delayed === 0 && c.prioritized === 0 && c.completed === 5" 20 >/dev/null
harness_psql "SELECT message_id FROM workers.inbox ORDER BY seq" >"$H_DIR/got.txt"
expect_eq "delayed jobs last" "" "$(diff "$H_DIR/expected.txt" "$H_DIR/got.txt" | head -5)"

# keep-count 5: the delayed jobs and three of the last batches' (jobs finished in one ms tie)
producer "console.log((await q.getCompleted(0, -1)).map((j) => j.id).join('\n'));" | sort >"$H_DIR/kept.txt"
expect_eq "kept completed jobs" 5 "$(wc -l <"$H_DIR/kept.txt")"
expect_eq "kept are the most recent" "" "$(tail -10 "$H_DIR/expected.txt" | sort | comm -23 "$H_DIR/kept.txt" - | head -3)"
left=0
while read -r id; do
	left=$((left + $(rcli EXISTS "bull:$Q:$id" "bull:$Q:$id:lock")))
done < <(sort "$H_DIR/expected.txt" | comm -23 - "$H_DIR/kept.txt")
expect_eq "keys left of trimmed or removed jobs" 0 "$left"
expect_eq "removeOnComplete job gone" 0 "$(rcli EXISTS "bull:$Q:$GONE")"
echo "PASS"
