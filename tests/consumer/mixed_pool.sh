#!/usr/bin/env bash
# consumer.mixed_pool: a real bullmq Worker (concurrency 2) and chat-outboxd share one queue of 1,000
# jobs: every job is processed by exactly one of them, both take some, and getJobCounts() shows all completed.
#   tests/consumer/mixed_pool.sh [cluster]
# With cluster (cluster.mixed_pool), the same on a Redis Cluster (tests/harness/redis_cluster.sh): the Worker
# on an ioredis Cluster connection, the daemon on the redis-cluster:// URL, and the queue named "{t-mixed}"
# (its keys in one hash slot; the daemon's --queue t-mixed is that queue on a cluster, docs/deploy.md).
. "$(dirname "$0")/../harness/lib.sh"
Q=t-mixed
N=1000
if [ "${1:-}" = cluster ]; then
	harness_init cluster-mixed-pool
	cluster_start
	REDIS_URL=$CLUSTER_URL
	HARNESS_PG_MANAGED=1 harness_pg_start
	daemon_export_settings
	PQ="{$Q}"
else
	daemon_env daemon-mixed
	PQ=$Q
fi

peer_bg worker.log worker "$PQ" 2 "$H_DIR/worker.txt"
harness_wait_for 20 grep -q ready "$H_DIR/worker.txt"
daemon_start daemon.log --service workers --queue $Q --batch-size 10
daemon_wait_consuming daemon.log

peer add "$PQ" $N 4 >"$H_DIR/ids.txt"
wait_counts "$PQ" "c.completed === $N && c.active === 0 && c.waiting === 0 && c.failed === 0" 60 >/dev/null

grep -v ready "$H_DIR/worker.txt" | sort >"$H_DIR/by-worker.txt"
harness_psql "SELECT message_id FROM workers.inbox" | sort >"$H_DIR/by-daemon.txt"
w=$(wc -l <"$H_DIR/by-worker.txt"); d=$(wc -l <"$H_DIR/by-daemon.txt")
echo "bullmq Worker processed $w, chat-outboxd $d"
expect_eq "processed once in total" $N $((w + d))
expect_eq "worker processed none twice" "$w" "$(uniq <"$H_DIR/by-worker.txt" | wc -l)"
expect_eq "processed by both" "" "$(comm -12 "$H_DIR/by-worker.txt" "$H_DIR/by-daemon.txt" | head -3)"
expect_eq "all ids" "" "$(sort "$H_DIR/ids.txt" | comm -3 - <(sort "$H_DIR/by-worker.txt" "$H_DIR/by-daemon.txt") | head -3)"
[ "$d" -gt 0 ] && [ "$w" -gt 0 ] || fail "one side took nothing"
