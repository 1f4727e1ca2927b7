#!/usr/bin/env bash
# tests/extension/update_in_place.sh - the update from 1.1 to 1.4 (1.2: the write-once outbox; 1.3:
# the inbox's changes waiting for their message; 1.4: the generations' storage parameters) in place,
# under traffic (managed.update_in_place runs it on the managed install with update_1.2.sql to
# update_1.4.sql).
# chat_outbox 1.1 is installed and relayed by the current relay the 1.1 way; a sender sends without
# pause and a real bullmq Worker processes. The relay is paused (extension: relay_enabled = off;
# managed: chat-outbox-relay SIGSTOPped between passes) until a backlog of unsent rows waits, then the
# update runs (ALTER EXTENSION chat_outbox UPDATE, or update_1.2.sql to update_1.4.sql as the owner)
# while the sender goes on; the relay resumes, now over windows. Checks: no send failed, the unsent rows
# were moved (unsent in the new outbox right after), every stored message processed exactly once, no
# job added twice, processed in the order sent (one sender: its order is the commit order); an edit
# stored before the update whose message had not come is found waiting by the update, and the message,
# stored after it, takes the edit's state.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
export HARNESS_INSTALL_VERSION=1.1
managed=${HARNESS_PG_MANAGED:-0}
harness_init "$([ "$managed" = 1 ] && echo managed-)update-in-place"
harness_redis_start
harness_pg_start
export REDIS_URL PGURL
HERE=$H_ROOT/tests/extension
PROCESSED=$H_DIR/processed.txt
DUPLICATED=$H_DIR/duplicated.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"
. "$HERE/delivery.sh"
expect_eq "installed" "t" "$(q "SELECT to_regclass('consumers.outbox_events') IS NULL")"

pause_relay() {
	if [ "$managed" = 1 ]; then
		# between passes: a relay stopped inside its transaction would hold the update's lock
		stopped_idle() {
			kill -STOP "$RELAY_PID"
			# the relay's session is idle: no other session but the sender's is in a statement or a transaction
			[ "$(q "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'
				AND state <> 'idle' AND query NOT LIKE '%send_message%'")" = 0 ] && return 0
			kill -CONT "$RELAY_PID"
			return 1
		}
		harness_wait_for 30 stopped_idle
	else
		q "ALTER SYSTEM SET chat_outbox.relay_enabled = off" >/dev/null
		q "SELECT pg_reload_conf()" >/dev/null
		harness_wait_value 30 = paused relay_status relay_state
	fi
}
resume_relay() {
	if [ "$managed" = 1 ]; then kill -CONT "$RELAY_PID"; else
		q "ALTER SYSTEM RESET chat_outbox.relay_enabled" >/dev/null
		q "SELECT pg_reload_conf()" >/dev/null
	fi
}

node "$HERE/consume.mjs" "$PROCESSED" "$DUPLICATED" >"$H_DIR/consumer.log" 2>&1 &
harness_track $!
harness_wait_for 20 grep -q ready "$H_DIR/consumer.log"
sender_start upd 2
harness_wait_for 30 sender_acked_at_least 200
harness_wait_for 30 relayed_up_to "$(q "SELECT max(id) FROM consumers.outbox")"
echo "ok   1.1 relayed by the relay of 1.2: $(stored) stored"

pause_relay
at=$(sender_acked)
harness_wait_for 30 sender_acked_at_least $((at + 100))
backlog=$(q "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL")
[ "$backlog" -gt 0 ] || fail "no backlog before the update"
# an edit whose message's job has not come yet (a retried job comes after the ones behind it), stored
# the way chat-outboxd stores it
waiting=00000000-0000-4000-8000-00000000c0de
q "INSERT INTO workers.inbox (message_id, chat_id, body, sender, target, kind, version, edited_at)
	VALUES (gen_random_uuid(), 5, 'edited before its message came', 'alice', '$waiting', 'edited', 1, now())" >/dev/null
if [ "$managed" = 1 ]; then
	for v in $(harness_managed_updates 1.1); do
		psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -f "$H_ROOT/sql/managed/update_$v.sql" >"$H_DIR/update.log" 2>&1 ||
			{ cat "$H_DIR/update.log" >&2; fail "update_$v.sql failed"; }
	done
else
	psql -XAtq -v ON_ERROR_STOP=1 "$PG_SUPER_URL" -c "ALTER EXTENSION chat_outbox UPDATE" >/dev/null
	expect_eq "extension version" "$(harness_ext_version)" "$(q "SELECT extversion FROM pg_extension WHERE extname = 'chat_outbox'")"
fi
moved=$(q "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL")
[ "$moved" -ge "$backlog" ] || fail "unsent rows lost by the update: $backlog before, $moved after"
echo "ok   updated under traffic with $backlog unsent rows waiting: $moved unsent in the new outbox"
expect_eq "the edit stored before the update waits for its message" "$waiting" "$(q "SELECT target FROM workers.inbox_waiting")"
q "INSERT INTO workers.inbox (message_id, chat_id, body, sender) VALUES ('$waiting', 5, 'as sent', 'alice')" >/dev/null
expect_eq "its message, stored after the update, takes the edit; nothing waits" "edited before its message came|1|0" \
	"$(q "SELECT body, version, (SELECT count(*) FROM workers.inbox_waiting) FROM workers.inbox WHERE message_id = '$waiting'")"
echo "ok   a change waiting across the update: found by it, taken by its message after it"
resume_relay
at=$(sender_acked)
harness_wait_for 30 sender_acked_at_least $((at + 200))
sender_stop
failed=$(grep -c retrying "$H_DIR/sender-upd.log" || true)
[ "$failed" -eq 0 ] || fail "$failed sends failed during the update: $(grep -m3 retrying "$H_DIR/sender-upd.log")"
echo "ok   no send failed during the update"
verify_delivered "the update under traffic"
expect_eq "jobs added twice (duplicated events)" 0 "$(wc -l <"$DUPLICATED")"
q "SELECT id FROM consumers.messages ORDER BY split_part(body, '-', 2)::int" >"$H_DIR/sent-order.txt"
awk '!seen[$0]++' "$PROCESSED" | diff -q "$H_DIR/sent-order.txt" - >/dev/null ||
	fail "processed out of the order sent: $(awk '!seen[$0]++' "$PROCESSED" | diff "$H_DIR/sent-order.txt" - | head -4)"
echo "ok   processed in the order sent ($(stored) messages)"
expect_eq "outbox rows updated or deleted since the update" 0 \
	"$(q "SELECT coalesce(sum(n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables WHERE schemaname = 'consumers' AND relname LIKE 'outbox_events%'")"
