#!/usr/bin/env bash
# tests/extension/schedules.sh - a seeded random schedule of concurrent senders against the write-once
# outbox while its generations switch every second or two (chat_outbox.retention = 1s), and the faults
# the relay must ride through, counted end to end: every message whose COMMIT succeeded must reach a
# real bullmq Worker once, in order per chat, and no other message may (issue 33).
#   The schedule (tests/extension/schedules.mjs run): 24 sessions, each transaction READ COMMITTED,
#   REPEATABLE READ or SERIALIZABLE; it reads first (taking a snapshot), may hold (10 "holder" sessions
#   hold 0.2-3.5 s, across a generation switch and the rotation step after it), then sends one or two
#   messages with consumers.send_message, the last sometimes in a SAVEPOINT released or rolled back to,
#   may hold again, and COMMITs, ROLLs BACK or PREPAREs (COMMIT PREPARED or ROLLBACK PREPARED later, from
#   another session). Serialization failures are counted as not committed. SCHEDULE_SEED=<n> replays the
#   schedule's choices (the seed is printed first; the timing is the machine's); SCHEDULE_SECONDS (45)
#   is how long the traffic runs at least.
#   Two relays at once throughout: the extension's background worker and a loop of
#   SELECT chat_outbox.relay_pass('consumers') (managed mode, tests/managed/in_managed_mode.sh: two
#   chat-outbox-relay processes). Real bullmq Workers on every queue of both layouts on both shards.
#   Events, each waited for as a state this test caused, the schedule sending throughout:
#     1. the rotation runs (two truncates) under the schedule;
#     2. the partition count 1 -> 4 (two Redis shards; the relay waits for the old queue to drain);
#     3. the relay SIGKILLed (the extension: the worker's backend, so the postmaster restarts the cluster
#        and every session reconnects; in-doubt COMMITs are settled by what consumers.messages holds;
#        prepared transactions survive and are finished; managed: one relay process, started again);
#     4. shard 1 SIGKILLed while sends go on, then started again;
#     5. until the traffic's time is up (three times at least), the rotation row held by a session until
#        the relays' rotation steps wait behind it, then released: their steps run back to back (in
#        managed mode one relay's step closes the generation the other's just switched from).
#   Prepared senders only where a send can be prepared (not in managed mode with wake = 'notify': a
#   NOTIFY cannot be prepared; tests/managed/in_managed_mode.sh --logical has them).
#   Verdict, once the state is settled (no prepared transaction left, no outbox row unsent, no job
#   waiting or active in any queue; a lost message never arrives, so this wait does not wait for it):
#   lost, twice, out of order
#   (per chat: B sent after A's COMMIT returned, or after A in one transaction, must arrive after A),
#   delivered but not committed, and the schedule's bookkeeping against consumers.messages; all must be 0.
# Rules: no sleep decides a verdict; every wait is for a state this test caused, its timeout a safety net.
# The traffic's length is a duration, not a count (a slow machine sends fewer messages, never fails).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$H_ROOT/tests/harness/shards.sh"
harness_init extension-schedules
MANAGED=${HARNESS_PG_MANAGED:-0}
SCHEDULE_SEED=${SCHEDULE_SEED:-$(((RANDOM << 15 | RANDOM) % 1000000))}
SCHEDULE_SECONDS=${SCHEDULE_SECONDS:-45}
echo "schedule seed $SCHEDULE_SEED (SCHEDULE_SEED=$SCHEDULE_SEED bash $0 replays its choices)"

harness_redis_start
shard1_start
export SHARD_URLS="$REDIS_URL $SHARD1_URL"
export REDIS_URL=$SHARD_URLS
if [ "$MANAGED" = 1 ]; then
	harness_pg_start "" "max_prepared_transactions = 100" # and one chat-outbox-relay (in_managed_mode.sh)
	FIRST_RELAY=$RELAY_PID
	q "UPDATE chat_outbox.settings SET retention = '1 second'"
	relay_start second
	# NOTIFY (the default wake-up) cannot be prepared; a logical decoding message can
	PREPARE=$([ "$(q "SELECT wake FROM chat_outbox.settings")" = wal ] && echo 1 || echo 0)
	RELAY_PASS=0
	ROTATORS=2
else
	harness_pg_start "" "chat_outbox.retention = '1s'" "max_prepared_transactions = 100"
	PREPARE=1
	RELAY_PASS=1
	ROTATORS=1 # relay_pass() runs no rotation step
fi
cd "$H_ROOT/tests/extension"
. "$H_ROOT/tests/harness/rotation.sh" # truncated, hold_rotation, release_rotation, rotation_waited_by

committed() { sed -n 's/^{"committed":\([0-9]*\).*/\1/p' "$H_DIR/progress" 2>/dev/null || echo 0; }
committed_at_least() { [ "$(committed)" -ge "$1" ]; }
relay_pid() { q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'"; }
processed_lines() { if [ -f "$H_DIR/processed.txt" ]; then wc -l <"$H_DIR/processed.txt"; else echo 0; fi; }
# schedule_goes_on <what>: 100 more messages committed and two more truncates since the event
schedule_goes_on() {
	local c t
	c=$(committed)
	t=$(truncated)
	harness_wait_for 90 committed_at_least $((c + 100)) || fail "sends stopped after $1"
	harness_wait_for 90 truncated_at_least $((t + 2)) || fail "the rotation did not go on after $1"
	echo "ok   $1: the schedule goes on ($(committed) committed), $(($(truncated) - t)) truncates since"
}

node schedules.mjs workers "$H_DIR/processed.txt" chat-messages 4 >"$H_DIR/workers.log" 2>&1 &
harness_track $!
harness_wait_for 30 grep ready "$H_DIR/workers.log"
SCHEDULE_SEED=$SCHEDULE_SEED SCHEDULE_PREPARE=$PREPARE SCHEDULE_RELAY_PASS=$RELAY_PASS \
	node schedules.mjs run "$H_DIR" >"$H_DIR/schedule.log" 2>&1 &
SCHEDULE_PID=$!
harness_track $SCHEDULE_PID
START=$EPOCHSECONDS

# 1. the rotation runs under the schedule
harness_wait_for 60 committed_at_least 100 || fail "the schedule commits nothing: $(tail -n 5 "$H_DIR/schedule.log")"
harness_wait_for 60 truncated_at_least 2 || fail "no generation truncated under the schedule"
schedule_goes_on "the schedule under the rotation"

# 2. the partition count 1 -> 4 (the old queue drains through its Worker first)
q "SELECT chat_outbox.set_partitions('consumers', 4)" >/dev/null
harness_wait_value 90 = 4 relay_status layout || fail "the relay did not switch to 4 partitions: $(relay_status layout_change)"
schedule_goes_on "the partition count 1 -> 4"

# 3. the relay SIGKILLed
if [ "$MANAGED" = 1 ]; then
	kill -9 "$FIRST_RELAY"
	relay_start first-again
else
	before=$(relay_pid)
	[ -n "$before" ] || fail "no relay worker to kill"
	kill -9 "$before"
	relay_back() { local p; p=$(relay_pid) && [ -n "$p" ] && [ "$p" != "$before" ]; }
	harness_wait_for 60 relay_back || fail "the relay did not come back"
fi
schedule_goes_on "the relay SIGKILLed"

# 4. shard 1 down while sends go on (its partitions wait, shard 0's relay on), then back
shard1_kill
c=$(committed)
p=$(processed_lines)
harness_wait_for 60 committed_at_least $((c + 100)) || fail "sends stopped while shard 1 was down"
harness_wait_value 60 -ge $((p + 50)) processed_lines || fail "shard 0's partitions stopped while shard 1 was down"
echo "ok   shard 1 down: $(($(committed) - c)) committed and $(($(processed_lines) - p)) processed meanwhile"
shard1_start
schedule_goes_on "shard 1 back"

# 5. the rest of the traffic, the rotation held now and then: the relays' rotation steps (both relays' in
#    managed mode) queue behind a session holding the rotation's row and run back to back once it is
#    released: a switch, and right after it, in the other relay's step, the close of the generation it
#    switched from (the close bound's race wants writers still running then); three times at least
RANDOM=$SCHEDULE_SEED
holds=0
while [ "$holds" -lt 3 ] || [ $((EPOCHSECONDS - START)) -lt "$SCHEDULE_SECONDS" ]; do
	hold_rotation
	harness_wait_for 30 rotation_waited_by "$ROTATORS" || fail "the relays' rotation steps did not queue behind the held rotation row"
	release_rotation
	holds=$((holds + 1))
	sleep "$((RANDOM % 2 + 1)).$((RANDOM % 10))" # the schedule's shape, not a verdict
done
echo "ok   the rotation held $holds times (each time $ROTATORS relay step(s) waited), then released"
# the schedule ends: its transactions finish, its prepared transactions are finished
touch "$H_DIR/stop"
wait "$SCHEDULE_PID" || fail "the schedule exited $?: $(tail -n 5 "$H_DIR/schedule.log")"
sed 's/^/     /' "$H_DIR/schedule.log"

# settled: nothing prepared, nothing unsent, no job waiting or running anywhere
queue_jobs() { # queue_jobs <redis-cli function> <queue>
	local k=bull:$2 n=0 x
	for x in $($1 LLEN "$k:wait") $($1 LLEN "$k:active") $($1 LLEN "$k:paused") $($1 ZCARD "$k:delayed") $($1 ZCARD "$k:prioritized"); do
		n=$((n + x))
	done
	echo "$n"
}
settled() {
	[ "$(q "SELECT count(*) FROM pg_prepared_xacts")" = 0 ] || return 1
	[ "$(q "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL")" = 0 ] || return 1
	[ "$(queue_jobs rcli chat-messages)" = 0 ] && [ "$(queue_jobs rcli chat-messages-p0)" = 0 ] &&
		[ "$(queue_jobs rcli chat-messages-p2)" = 0 ] && [ "$(queue_jobs rcli1 chat-messages-p1)" = 0 ] &&
		[ "$(queue_jobs rcli1 chat-messages-p3)" = 0 ]
}
harness_wait_for 120 settled || fail "not settled: $(q "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL") rows unsent, $(q "SELECT count(*) FROM pg_prepared_xacts") prepared"
q "SELECT body FROM consumers.messages" >"$H_DIR/stored.txt"
echo "ok   settled after $((EPOCHSECONDS - START)) s: $(wc -l <"$H_DIR/stored.txt") messages stored, $(processed_lines) jobs processed, $(truncated) generations truncated"
node schedules.mjs check "$H_DIR" >"$H_DIR/check.txt" 2>&1 || {
	sed 's/^/     /' "$H_DIR/check.txt"
	fail "schedule seed $SCHEDULE_SEED: $(tail -n 1 "$H_DIR/check.txt")"
}
sed 's/^/     /' "$H_DIR/check.txt"
echo "ok   schedule seed $SCHEDULE_SEED: $(tail -n 1 "$H_DIR/check.txt")"
echo PASS
