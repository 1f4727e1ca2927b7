#!/usr/bin/env bash
# tests/extension/partitions.sh - a service's partitions on two Redis shards (docs/architecture.md,
# 'Partitions and shards'), read by real bullmq Workers (partition_workers.mjs):
#   1. 4 partitions on 2 shards: each chat's jobs land in its partition's queue (chat mod 4) on the
#      partition's shard (partition mod 2), once each, in send order; the layout key says 4.
#   2. a live change from 1 to 4 partitions while messages are sent: the relay waits (and
#      chat_outbox.status says so) until the old queue is empty, then relays under 4; every chat's
#      messages arrive once and in order across the change.
#   3. one shard down: the other shard's partitions keep relaying; the down shard's rows go once it
#      is back; every chat's messages once and in order.
#   4. the change again while messages stream in and consumers run (managed mode: two relays).
# Runs against the extension, and in managed mode (tests/managed/in_managed_mode.sh) against chat-outbox-relay.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$H_ROOT/tests/harness/shards.sh"
harness_init extension-partitions
harness_redis_start
shard1_start
export SHARD_URLS="$REDIS_URL $SHARD1_URL"
REDIS_URL="$SHARD_URLS" harness_pg_start

check() { expect_eq "$3" "$2" "$1"; } # check <got> <want> <what>
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
workers() { # workers <file> <queue>: partition_workers.mjs in the background, once ready
	(cd "$H_ROOT/tests/extension" && node partition_workers.mjs "$H_DIR/$1" "$2" 4 >"$H_DIR/workers-$2.log" 2>&1) &
	harness_track $!
	WORKERS_PID=$!
	harness_wait_for 30 grep ready "$H_DIR/workers-$2.log"
}
send_round() { # send_round <service> <round> <chats...>: one transaction, body "<chat>:<round>"
	local svc=$1 round=$2
	shift 2
	q "SELECT $svc.send_message(c, c || ':$round') FROM unnest('{$(IFS=,; echo "$*")}'::bigint[]) WITH ORDINALITY AS t(c, o) ORDER BY o" >/dev/null
}
CHATS=(-3 -2 -1 0 1 2 3 4 5 6)

# 1. four partitions on two shards
q "SELECT chat_outbox.create_service('parts', queue => 'parts-q', partitions => 4)" >/dev/null
workers parts.txt parts-q
for r in 1 2 3 4 5; do send_round parts "$r" "${CHATS[@]}"; done
harness_wait_value 30 -ge 50 lines "$H_DIR/parts.txt" || fail "parts: $(lines "$H_DIR/parts.txt") of 50 jobs processed"
python3 "$H_ROOT/tests/extension/partitions_check.py" "$H_DIR/parts.txt" parts-q 2 5 || fail "parts: see above"
check "$(rcli GET bull:parts-q:partitions)" 4 "layout key on shard 0"
check "$(rcli1 EXISTS bull:parts-q:partitions)" 0 "layout key only on shard 0"
check "$(rcli1 EXISTS bull:parts-q-p0:meta bull:parts-q-p2:meta)" 0 "shard 1 holds no even partition"
check "$(q "SELECT string_agg(partition || ':' || queue || ':' || shard || ':' || (redis IS NOT NULL), ' ' ORDER BY partition)
	FROM chat_outbox.partition_status WHERE service = 'parts'")" \
	"0:parts-q-p0:0:true 1:parts-q-p1:1:true 2:parts-q-p2:0:true 3:parts-q-p3:1:true" "partition_status"
echo "ok   4 partitions on 2 shards: each chat in its partition's queue on its shard, in order"

# 2. a live change from 1 to 4 partitions while messages are sent
q "SELECT chat_outbox.create_service('live', queue => 'live-q')" >/dev/null
for r in $(seq 1 10); do send_round live "$r" "${CHATS[@]}"; done
harness_wait_value 30 -eq 100 rcli LLEN bull:live-q:wait || fail "live: $(rcli LLEN bull:live-q:wait) of 100 in live-q"
q "SELECT chat_outbox.set_partitions('live', 4)"
for r in $(seq 11 20); do send_round live "$r" "${CHATS[@]}"; done
waiting_change() { [[ "$(q "SELECT layout_change FROM chat_outbox.status WHERE service = 'live'")" == *"waiting for 100 job"* ]]; }
harness_wait_for 30 waiting_change || fail "status during the change: $(q "SELECT partitions, layout, layout_change FROM chat_outbox.status WHERE service = 'live'")"
check "$(q "SELECT partitions || ' ' || layout FROM chat_outbox.status WHERE service = 'live'")" "4 1" "status: asked for 4, relayed under 1"
check "$(rcli LLEN bull:live-q:wait)" 100 "nothing relayed under 1 after the change was asked for"
check "$( (rcli KEYS "bull:live-q-p*"; rcli1 KEYS "bull:live-q-p*") | grep -c . || true)" 0 "nothing relayed under 4 before the old queue is empty"
echo "ok   the change waits for the old queue's 100 jobs: $(q "SELECT layout_change FROM chat_outbox.status WHERE service = 'live'")"
workers live.txt live-q
for r in $(seq 21 30); do send_round live "$r" "${CHATS[@]}"; done
harness_wait_value 60 -ge 300 lines "$H_DIR/live.txt" || fail "live: $(lines "$H_DIR/live.txt") of 300 jobs processed"
python3 "$H_ROOT/tests/extension/partitions_check.py" "$H_DIR/live.txt" live-q 2 30 || fail "live: see above"
check "$(rcli GET bull:live-q:partitions)" 4 "layout key after the change"
check "$(q "SELECT partitions || ' ' || layout || ' ' || coalesce(layout_change, '-') FROM chat_outbox.status WHERE service = 'live'")" \
	"4 4 -" "status after the change"
check "$(grep -c '^live-q ' "$H_DIR/live.txt")" 100 "jobs relayed under 1 partition"
echo "ok   live change 1 -> 4: 300 messages of 10 chats once and in order across it"

# 3. one shard down
shard1_kill
for r in 6 7 8; do send_round parts "$r" "${CHATS[@]}"; done
on_shard0() { grep -cE '^parts-q-p[02] .* [0-9-]+:[678]$' "$H_DIR/parts.txt" || true; }
harness_wait_value 30 -eq 15 on_shard0 || fail "shard 0's partitions: $(on_shard0) of 15 rows relayed while shard 1 is down"
check "$(grep -cE ':[678]$' "$H_DIR/parts.txt")" 15 "only shard 0's partitions relayed while shard 1 is down"
echo "ok   shard 1 down: shard 0's partitions relay on"
shard1_start
harness_wait_value 60 -ge 80 lines "$H_DIR/parts.txt" || fail "parts: $(lines "$H_DIR/parts.txt") of 80 after shard 1 came back"
python3 "$H_ROOT/tests/extension/partitions_check.py" "$H_DIR/parts.txt" parts-q 2 8 || fail "parts after the outage: see above"
echo "ok   shard 1 back: its rows went, every chat once and in order"
# 4. a change while messages stream in and consumers run (in managed mode with a second relay
#    beside the first: their claims' row locks keep them from relaying one service under two counts)
[ "${HARNESS_PG_MANAGED:-0}" != 1 ] || REDIS_URL="$SHARD_URLS" relay_start second
q "SELECT chat_outbox.create_service('busy', queue => 'busy-q')" >/dev/null
workers busy.txt busy-q
for r in $(seq 1 40); do
	send_round busy "$r" "${CHATS[@]}"
	[ "$r" != 10 ] || q "SELECT chat_outbox.set_partitions('busy', 4)"
done
harness_wait_value 60 -ge 400 lines "$H_DIR/busy.txt" || fail "busy: $(lines "$H_DIR/busy.txt") of 400 jobs processed"
python3 "$H_ROOT/tests/extension/partitions_check.py" "$H_DIR/busy.txt" busy-q 2 40 || fail "busy: see above"
check "$(rcli GET bull:busy-q:partitions)" 4 "layout key after a change under load"
echo "ok   change 1 -> 4 while sending with consumers running: 400 messages once and in order per chat ($(grep -c '^busy-q ' "$H_DIR/busy.txt") under 1 partition)"
echo PASS
