#!/usr/bin/env bash
# daemon.sigterm: SIGTERM mid-stream exits 0 after finishing its batch (no job left active with our
# lock); a restart processes the rest; every job lands in the inbox exactly once.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/daemon_lib.sh"
daemon_env daemon-sigterm
Q=t-sigterm
N=3000

peer add $Q $N 8 >"$H_DIR/ids.txt"
daemon_start first.log --service workers --queue $Q --batch-size 50 --identity s1 --lock-duration 30000
harness_wait_for 20 bash -c "[ \$(psql -XAtq '$PGURL' -c 'SELECT count(*) FROM workers.inbox') -ge 200 ]"
kill -TERM "$DAEMON_PID"
set +e; wait "$DAEMON_PID"; rc=$?; set -e
expect_eq "exit code after SIGTERM" 0 "$rc"
c=$(peer counts $Q)
echo "after SIGTERM: $c, inbox $(inbox_count workers)"
node -e "const c=$c; process.exit(c.active === 0 ? 0 : 1)" || { echo "FAIL: jobs left active" >&2; exit 1; }
expect_eq "completed = inbox rows" "$(inbox_count workers)" "$(node -e "console.log(($c).completed)")"

daemon_start second.log --service workers --queue $Q --batch-size 50 --identity s1
wait_counts $Q "c.completed === $N && c.active === 0 && c.waiting === 0" 60 >/dev/null
expect_eq "inbox rows" $N "$(inbox_count workers)"
harness_psql "SELECT message_id FROM workers.inbox ORDER BY seq" >"$H_DIR/seq.txt"
expect_eq "inbox order = queue order" "" "$(diff "$H_DIR/ids.txt" "$H_DIR/seq.txt" | head -3)"
echo "PASS"
