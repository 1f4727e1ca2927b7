#!/usr/bin/env bash
# tests/extension/layout_guard.sh - the layout key changed under the relay by another actor (an
# operator, a Redis that lost it), on one Redis shard, where a pass whose service still wants the
# count it last relayed under reads no key and the batch-add script checks it instead
# (docs/architecture.md, 'Changing the number of partitions'):
#   1. passes under an unchanged count send no GET;
#   2. the key SET to another count while the service's count stays: the pass writes nothing, the
#      next one reads the key and waits for that count's queues like any change, then relays
#      under the service's count; every chat's messages once and in order;
#   3. the key deleted (absent means 1 partition): the relay writes the service's count again
#      before relaying, and nothing goes under 1;
#   4. a one-partition service (its key absent) whose key is SET to 2: the relay sets it back to 1;
#   5. its key SET to bytes that are no count: a service failure with backoff, not a loop of passes.
# Each change is logged once as "layout changed", never as a service failure.
# Runs against the extension, and in managed mode (tests/managed/in_managed_mode.sh) against chat-outbox-relay.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-layout-guard
harness_redis_start
export SHARD_URLS=$REDIS_URL
harness_pg_start

check() { expect_eq "$3" "$2" "$1"; } # check <got> <want> <what>
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
workers() { # workers <file> <queue> <max partitions>: partition_workers.mjs in the background, once ready
	(cd "$H_ROOT/tests/extension" && node partition_workers.mjs "$H_DIR/$1" "$2" "$3" >"$H_DIR/workers-$2.log" 2>&1) &
	harness_track $!
	harness_wait_for 30 grep ready "$H_DIR/workers-$2.log"
}
send_round() { # send_round <service> <round> <chats...>: one transaction, body "<chat>:<round>"
	local svc=$1 round=$2
	shift 2
	q "SELECT $svc.send_message(c, c || ':$round') FROM unnest('{$(IFS=,; echo "$*")}'::bigint[]) WITH ORDINALITY AS t(c, o) ORDER BY o" >/dev/null
}
waiting() { rcli LLEN "bull:$1:wait"; }
in_p0_p1() { echo $(($(waiting guard-q-p0) + $(waiting guard-q-p1))); }
# Redis' MONITOR shows who reads the layout key: a client (the relay's GET) or the batch-add script
# ("lua"). marked <name>: the monitored commands since `rcli ECHO <name>-start` until `... <name>-end`.
(rcli MONITOR >"$H_DIR/monitor.txt") &
harness_track $!
harness_wait_for 10 grep -q OK "$H_DIR/monitor.txt"
mark() { rcli ECHO "$1" >/dev/null; harness_wait_for 10 grep -q "\"ECHO\" \"$1\"" "$H_DIR/monitor.txt"; }
marked() { sed -n "/\"ECHO\" \"$1-start\"/,/\"ECHO\" \"$1-end\"/p" "$H_DIR/monitor.txt"; }
key_reads() { # key_reads <name> <client|lua>
	local who='[0-9.]+:[0-9]+'
	[ "$2" = client ] || who=lua
	marked "$1" | grep -cE "\[[0-9]+ $who\] \"GET\" \"bull:guard-q:partitions\"" || true
}
changes_logged() { relay_log_lines 'layout changed'; }
# how each relay logs that a service starts failing
FAILED_TEXT='cannot be relayed'
[ "${HARNESS_PG_MANAGED:-0}" != 1 ] || FAILED_TEXT='the other services go on'
CHATS=(-3 -2 -1 0 1 2 3 4 5 6)

# 1. two partitions on one shard
q "SELECT chat_outbox.create_service('guard', queue => 'guard-q', partitions => 2)" >/dev/null
send_round guard 1 "${CHATS[@]}"
harness_wait_value 30 -eq 10 in_p0_p1 || fail "guard: $(in_p0_p1) of 10 relayed"
check "$(rcli GET bull:guard-q:partitions)" 2 "layout key after the first pass"
mark unchanged-start
for r in 2 3 4; do
	send_round guard "$r" "${CHATS[@]}"
	harness_wait_value 30 -eq $((r * 10)) in_p0_p1 || fail "guard: $(in_p0_p1) of $((r * 10)) relayed"
done
mark unchanged-end
check "$(key_reads unchanged client)" 0 "GETs of the layout key by the relay while the count stays"
checked=$(key_reads unchanged lua)
[ "$checked" -ge 3 ] || fail "the batch-add script read the layout key $checked times in 3 passes"
echo "ok   3 passes under an unchanged count: the relay read no layout key, the script checked it $checked times"

# 2. another actor SETs the key to 4 while the service wants 2
rcli SET bull:guard-q:partitions 4 >/dev/null
send_round guard 5 "${CHATS[@]}"
waiting_change() { [[ "$(q "SELECT layout_change FROM chat_outbox.status WHERE service = 'guard'")" == *"waiting for 40 job"* ]]; }
harness_wait_for 30 waiting_change || fail "status after the key changed: $(q "SELECT partitions, layout, layout_change FROM chat_outbox.status WHERE service = 'guard'")"
check "$(in_p0_p1)" 40 "nothing relayed under the stale count once the key said 4"
check "$(rcli KEYS 'bull:guard-q-p[23]:*' | grep -c . || true)" 0 "nothing relayed under 4 while its queues hold jobs"
check "$(changes_logged)" 1 "'layout changed' logged"
echo "ok   key SET to 4 under a service at 2: the pass wrote nothing, the next waits ($(q "SELECT layout_change FROM chat_outbox.status WHERE service = 'guard'"))"
workers guard.txt guard-q 4
harness_wait_value 60 -ge 50 lines "$H_DIR/guard.txt" || fail "guard: $(lines "$H_DIR/guard.txt") of 50 jobs processed"
python3 "$H_ROOT/tests/extension/partitions_check.py" "$H_DIR/guard.txt" guard-q 1 5 2 || fail "guard: see above"
check "$(rcli GET bull:guard-q:partitions)" 2 "layout key once the 4 queues were empty"
check "$(q "SELECT partitions || ' ' || layout || ' ' || coalesce(layout_change, '-') FROM chat_outbox.status WHERE service = 'guard'")" \
	"2 2 -" "status after the change back"
echo "ok   relayed under 2 again once 4's queues were empty: 50 messages of 10 chats once and in order"

# 3. the key deleted (a Redis that lost it): absent means 1 partition
rcli DEL bull:guard-q:partitions >/dev/null
send_round guard 6 "${CHATS[@]}"
harness_wait_value 30 -ge 60 lines "$H_DIR/guard.txt" || fail "guard: $(lines "$H_DIR/guard.txt") of 60 jobs processed"
python3 "$H_ROOT/tests/extension/partitions_check.py" "$H_DIR/guard.txt" guard-q 1 6 2 || fail "guard after the delete: see above"
check "$(rcli GET bull:guard-q:partitions)" 2 "layout key written again before relaying"
check "$(grep -c '^guard-q ' "$H_DIR/guard.txt" || true)" 0 "jobs relayed under 1 partition"
check "$(changes_logged)" 2 "'layout changed' logged"
echo "ok   key deleted: written back to 2 before the next jobs, 60 messages once and in order"

# 4. a one-partition service, its key absent, SET to 2 by another actor
q "SELECT chat_outbox.create_service('one', queue => 'one-q')" >/dev/null
workers one.txt one-q 2
send_round one 1 "${CHATS[@]}"
harness_wait_value 30 -ge 10 lines "$H_DIR/one.txt" || fail "one: $(lines "$H_DIR/one.txt") of 10 jobs processed"
check "$(rcli EXISTS bull:one-q:partitions)" 0 "a one-partition service's key stays absent"
rcli SET bull:one-q:partitions 2 >/dev/null
send_round one 2 "${CHATS[@]}"
harness_wait_value 30 -ge 20 lines "$H_DIR/one.txt" || fail "one: $(lines "$H_DIR/one.txt") of 20 jobs processed"
python3 "$H_ROOT/tests/extension/partitions_check.py" "$H_DIR/one.txt" one-q 1 2 || fail "one: see above"
check "$(grep -c '^one-q ' "$H_DIR/one.txt")" 20 "jobs relayed under 1 partition"
check "$(rcli GET bull:one-q:partitions)" 1 "layout key set back to the service's count"
check "$(changes_logged)" 3 "'layout changed' logged"
echo "ok   key SET to 2 under a one-partition service: set back to 1, 20 messages once and in order"

check "$(relay_log_lines "$FAILED_TEXT")" 0 "service failures logged"
check "$(q "SELECT count(*) FROM chat_outbox.status WHERE service_error IS NOT NULL")" 0 "services showing an error"
echo "ok   no change was a service failure"

# 5. bad input: a key whose value goes on after a NUL byte ("1", NUL, "x") is no count, although its
#    text up to the NUL is: that service fails (logged once, backoff) instead of reading "1" and
#    having every call refused, a pass after pass with no backoff; set right, it relays again
printf '1\000x' | rcli -x SET bull:one-q:partitions >/dev/null
send_round one 3 "${CHATS[@]}"
one_failing() { [[ "$(q "SELECT service_error FROM chat_outbox.status WHERE service = 'one'")" == *"layout key of queue one-q holds"* ]]; }
harness_wait_for 30 one_failing || fail "one with a bad layout key: $(q "SELECT service_error FROM chat_outbox.status WHERE service = 'one'")"
# the whole value, escaped (common/partitions.hpp, LayoutValueProblem): not cut at its NUL
check "$(q "SELECT service_error FROM chat_outbox.status WHERE service = 'one'")" \
	"the layout key of queue one-q holds \"1\\x00x\", not a partition count from 1 to 256" "the status text of the bad value"
rcli SET bull:one-q:partitions 1 >/dev/null
harness_wait_value 30 -ge 30 lines "$H_DIR/one.txt" || fail "one: $(lines "$H_DIR/one.txt") of 30 jobs processed"
python3 "$H_ROOT/tests/extension/partitions_check.py" "$H_DIR/one.txt" one-q 1 3 || fail "one after the bad key: see above"
check "$(changes_logged)" 4 "'layout changed' logged (the bad value's one change)"
check "$(relay_log_lines "$FAILED_TEXT")" 1 "the bad value's failure logged"
echo "ok   a key of \"1\", NUL, \"x\": one service failure, no loop; relayed once set right, 30 messages once and in order"
echo PASS
