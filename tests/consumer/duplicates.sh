#!/usr/bin/env bash
# consumer.duplicates: the same message delivered twice is written (and shown) once:
# a second job carrying the same message id, and the same job id re-added after removeOnComplete.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-duplicates
Q=t-dup
A=$(uuid)
B=$(uuid)

daemon_start daemon.log --service workers --queue $Q --remove-on-complete -1
daemon_wait_consuming daemon.log

peer add-raw $Q "$A" "{\"id\":\"$A\",\"chat_id\":5,\"body\":\"first\"}"
wait_counts $Q "c.completed === 1" >/dev/null
# another job id, same message id (e.g. a producer that retried with a fresh job id)
peer add-raw $Q "dup-$A" "{\"id\":\"$A\",\"chat_id\":5,\"body\":\"first again\"}"
wait_counts $Q "c.completed === 2" >/dev/null
expect_eq "second job returnvalue" '{"state":"completed","returnvalue":{"duplicate":true},"attemptsMade":1}' \
	"$(peer job $Q "dup-$A")"

# same job id again once the first was removed on completion (BullMQ accepts it again:
# docs/protocols/bullmq.md, 'Duplicates and retention')
Bdata="{\"id\":\"$B\",\"chat_id\":5,\"body\":\"second\"}"
bullmq_js $Q "
await q.add('message.created', $Bdata, { jobId: '$B', removeOnComplete: true });
for (let i = 0; i < 200 && await q.getJob('$B'); i++) await new Promise(r => setTimeout(r, 50));
await q.add('message.created', $Bdata, { jobId: '$B', removeOnComplete: true });
for (let i = 0; i < 200 && await q.getJob('$B'); i++) await new Promise(r => setTimeout(r, 50));"
wait_counts $Q "c.completed === 2 && c.active === 0 && c.waiting === 0" >/dev/null

expect_eq "inbox rows" 2 "$(inbox_count workers)"
expect_eq "bodies" "first second" "$(harness_psql "SELECT string_agg(body, ' ' ORDER BY seq) FROM workers.inbox")"
expect_eq "duplicates counted" 2 "$(daemon_duplicates_logged daemon.log)"
echo "PASS"
