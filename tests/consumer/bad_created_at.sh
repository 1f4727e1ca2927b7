#!/usr/bin/env bash
# consumer.bad_created_at: a created_at that looks like ISO 8601 but Postgres rejects (Feb 31) costs only
# its own message its created_at (stored NULL); the other messages of the same batch keep theirs, and all are stored
# in queue order.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-bad-created-at
Q=t-bad-created-at

# Five jobs in wait before the daemon starts, so one fetch takes them as one batch.
: >"$H_DIR/ids.txt"
for i in 1 2 3 4 5; do
	id=$(uuid)
	created="2026-0$i-1${i}T10:00:00Z"
	[ "$i" = 3 ] && created="2026-02-31T00:00:00Z"
	peer add-raw $Q "$id" "{\"id\":\"$id\",\"chat_id\":7,\"body\":\"m$i\",\"created_at\":\"$created\"}"
	echo "$id" >>"$H_DIR/ids.txt"
done
daemon_start daemon.log --service workers --queue $Q --batch-size 10
wait_inbox workers 5 20

expect_eq "inbox order = queue order" "$(cat "$H_DIR/ids.txt")" \
	"$(harness_psql "SELECT message_id FROM workers.inbox ORDER BY seq")"
expect_eq "the good messages keep their created_at" \
	"m1|2026-01-11 10:00:00+00
m2|2026-02-12 10:00:00+00
m4|2026-04-14 10:00:00+00
m5|2026-05-15 10:00:00+00" \
	"$(harness_psql "SET TIME ZONE 'UTC'; SELECT body, created_at FROM workers.inbox WHERE body <> 'm3' ORDER BY seq")"
expect_eq "the bad one is stored without a created_at" t \
	"$(harness_psql "SELECT created_at IS NULL FROM workers.inbox WHERE body = 'm3'")"
grep -q "inbox commit: 5 job(s), 5 new" "$H_DIR/daemon.log" || fail "the five jobs were not one batch"
echo PASS
