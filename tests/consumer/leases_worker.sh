#!/usr/bin/env bash
# consumer.leases_worker: a real bullmq Worker serves one partition beside our daemons. Queue t-lw has
# two partitions; both daemons run with --leave-partitions 1, so one of them works partition 0 and
# neither ever leases or touches partition 1, which the Worker (concurrency 1, so in order) serves
# alone. A real bullmq Queue feeds both partitions. /healthz and /metrics show the lease held.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-leases-worker
Q=t-lw
N=300
rcli SET "bull:$Q:partitions" 2 >/dev/null

peer_bg worker.log worker "$Q-p1" 1 "$H_DIR/worker.txt"
harness_wait_for 10 grep -q ready "$H_DIR/worker.txt"
for name in d1 d2; do
	daemon_start "$name.log" --service workers --queue $Q --identity "$name" --lease-ttl 1000 --leave-partitions 1
	eval "PID_$name=$DAEMON_PID URL_$name=$DAEMON_URL"
done
harness_wait_value 20 = 1 rcli EXISTS "bull:$Q-p0:lease"
holder=$(rcli GET "bull:$Q-p0:lease")
holder=${holder%#*} # the identity (the value: <identity>#<process token>)
eval "url=\$URL_$holder"
echo "partition 0 is leased by $holder"

peer add "$Q-p0" $N 0 >"$H_DIR/ids-0.txt" &
adder=$!
peer add "$Q-p1" $N 1 >"$H_DIR/ids-1.txt"
wait $adder
wait_inbox workers $N 30
wait_counts "$Q-p1" "c.completed === $N && c.active === 0 && c.waiting === 0" 30 >/dev/null
wait_counts "$Q-p0" "c.completed === $N && c.active === 0 && c.waiting === 0" 30 >/dev/null

expect_eq "partition 1 rows in the inbox (the Worker's)" 0 "$(harness_psql "SELECT count(*) FROM workers.inbox WHERE chat_id = 1")"
expect_eq "partition 1 done by the Worker, in order" "" "$(grep -v ready "$H_DIR/worker.txt" | diff "$H_DIR/ids-1.txt" - | head -3)"
harness_psql "SELECT message_id FROM workers.inbox WHERE chat_id = 0 ORDER BY seq" >"$H_DIR/seq-0.txt"
expect_eq "partition 0 in the inbox in queue order" "" "$(diff "$H_DIR/ids-0.txt" "$H_DIR/seq-0.txt" | head -3)"
expect_eq "lease of partition 1" 0 "$(rcli EXISTS "bull:$Q-p1:lease")"
expect_eq "daemon log lines about partition 1" 0 "$(cat "$H_DIR/d1.log" "$H_DIR/d2.log" | grep -c "$Q-p1" || true)"
curl -s "$url/healthz" | grep '"partitions":\[{"partition":0,"queue":"t-lw-p0","lease":"held"}\]' >/dev/null ||
	fail "healthz of $holder: $(curl -s "$url/healthz")"
curl -s "$url/metrics" | grep -x 'chat_outboxd_partition_owned{partition="0",queue="t-lw-p0"} 1' >/dev/null ||
	fail "metrics of $holder lack the owned partition"
curl -s "$url/metrics" | grep -x 'chat_outboxd_partitions 2' >/dev/null || fail "metrics of $holder lack the partition count"
# the held partition's backlog in Redis, counted at each lease tick: nothing waits once it is drained
harness_wait_for 10 bash -c "curl -s $url/metrics | grep -x 'chat_outboxd_partition_waiting_jobs{partition=\"0\",queue=\"t-lw-p0\"} 0' >/dev/null" ||
	fail "metrics of $holder lack the held partition's waiting jobs: $(curl -s "$url/metrics" | grep waiting_jobs)"

daemons_stop "$PID_d1" "$PID_d2"
expect_eq "lease of partition 0 after SIGTERM" 0 "$(rcli EXISTS "bull:$Q-p0:lease")"
echo "PASS"
