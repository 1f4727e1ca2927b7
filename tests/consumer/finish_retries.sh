#!/usr/bin/env bash
# consumer.finish_retries: two batches whose completion scripts Redis refuses at once (here its ACL denies
# scripts for a while, as a Redis restarting still LOADING refuses them) each go again after the backoff and
# complete; neither is dropped, and the consumer goes on fetching. The two are made to finish together: the
# inbox is locked while the daemon fetches them (one batch, and the next prefetched), and let go once Redis
# refuses scripts. (Not maxmemory: a script's first write, its XTRIM, frees memory, and the writes after
# it are let through.)
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-finish-retries
Q=t-finish
N=10 # two batches of 5

# a session holding the inbox against inserts until told (its input a FIFO, kept open by fd 7)
mkfifo "$H_DIR/lock.fifo"
psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" <"$H_DIR/lock.fifo" >"$H_DIR/lock.out" 2>&1 &
harness_track $!
exec 7>"$H_DIR/lock.fifo"
echo "BEGIN; LOCK TABLE workers.inbox IN EXCLUSIVE MODE; SELECT 'locked';" >&7
harness_wait_for 10 grep -q locked "$H_DIR/lock.out"

# a long lease: its renewals are refused too while Redis refuses scripts, and must not lose it meanwhile
peer add $Q $N 1 >"$H_DIR/ids.txt"
daemon_start d.log --service workers --queue $Q --batch-size 5 --lease-ttl 60000
wait_counts $Q "c.active === $N" 20 >/dev/null # both batches fetched, waiting for the inbox
rcli ACL SETUSER default -evalsha -eval >/dev/null
echo "COMMIT;" >&7
exec 7>&-
refused() { grep -c 'complete failed: NOPERM' "$H_DIR/d.log" || true; }
harness_wait_value 20 -ge 2 refused # each batch's completion refused at least once
rcli ACL SETUSER default +@all >/dev/null
wait_counts $Q "c.completed === $N && c.active === 0" 20 >/dev/null ||
	fail "not every refused completion went again: $(peer counts $Q)"
expect_eq "inbox rows" $N "$(inbox_count workers)"
echo "ok   two batches' completions refused together ($(refused) refusals): both went again and completed"

peer add $Q $N 1 >>"$H_DIR/ids.txt"
wait_counts $Q "c.completed === $((2 * N)) && c.active === 0 && c.waiting === 0" 20 >/dev/null
expect_eq "inbox rows" $((2 * N)) "$(inbox_count workers)"
echo "ok   the consumer went on: $((2 * N)) jobs completed, each once in the inbox"
