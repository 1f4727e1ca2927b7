#!/usr/bin/env bash
# consumer.faults: while jobs flow, Redis is killed and restarted (AOF) and Postgres is restarted:
# nothing is lost, nothing is shown twice, and no job is completed without its inbox row.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-faults
Q=t-faults

daemon_start daemon.log --service workers --queue $Q --batch-size 20
daemon_wait_consuming daemon.log
peer add $Q 200 1 >"$H_DIR/ids.txt"
wait_inbox workers 200

# Redis: a clean stop (AOF flushed), jobs added after it comes back; the daemon reconnects by itself
harness_redis_stop
sleep 1
harness_redis_start_again
peer add $Q 200 2 >>"$H_DIR/ids.txt"
wait_inbox workers 400 30
grep -q "redis back" "$H_DIR/daemon.log" || fail "no 'redis back' line"

# Postgres restarted while a stream of jobs is consumed
peer add $Q 600 3 >>"$H_DIR/ids.txt" &
adder=$!
sleep 0.3
harness_pg_ctl restart -m fast -w >/dev/null
wait $adder
wait_inbox workers 1000 60
wait_counts $Q "c.completed === 1000 && c.active === 0 && c.waiting === 0" 30 >/dev/null

# every completed job has its inbox row, no row twice
harness_psql "SELECT message_id FROM workers.inbox" | sort >"$H_DIR/inbox.txt"
expect_eq "ids = inbox rows" "" "$(sort "$H_DIR/ids.txt" | diff - "$H_DIR/inbox.txt" | head -3)"
grep -q "postgres (chat-outboxd workers inbox) back" "$H_DIR/daemon.log" || fail "no 'postgres back' line"
echo "PASS"
