#!/usr/bin/env bash
# tests/managed/wake_logical.sh - the logical wake-up (chat_outbox.settings.wake = 'wal',
# chat-outbox-relay --wake logical) on a managed install with wal_level = logical:
#   1. A send makes no NOTIFY (a session LISTENing hears nothing; with wake = 'notify' it does).
#   2. The relay, its poll interval an hour, relays 200 messages woken by its stream alone, each
#      processed once, in order.
#   3. Its slot is temporary and reports what it read: its confirmed position reaches the WAL
#      position after the sends, so a running relay holds no WAL.
#   4. pg_ctl restart -m fast while the relay backs off from a Redis outage finishes (with
#      wal_sender_timeout = 0, a walsender waiting for a relay that does not answer would hold the
#      shutdown forever), and the relay streams again: a message sent after the restart arrives,
#      woken by the stream alone.
#   5. The relay SIGKILLed: its slot is gone, so a relay that is gone holds no WAL either.
#   6. The owner without REPLICATION: the relay logs the stream's failure once over several
#      attempts, relays by its poll, and streams again once REPLICATION is granted back.
#   7. A COMMIT the relay hears before its rows are visible (the WAL is flushed, and streamed,
#      before the transaction leaves the procarray) is relayed at once all the same: the relay looks
#      again (relay/src/core/wake_recheck.hpp) instead of waiting for its poll, an hour here.
#   8. A streaming standby listed first in --database-url, without target_session_attrs: the relay
#      asks libpq for a primary (common/process/pg_primary.hpp), so its connection and its stream skip the
#      standby, and a message is relayed woken by the stream. Taking the standby, it could claim
#      nothing (read-only) and stream nothing (no logical decoding on a PG 15 standby).
set -euo pipefail
export HARNESS_MANAGED_WAKE=logical
. "$(dirname "$0")/../harness/lib.sh"
relay_managed_env managed-wake-logical
HERE=$H_ROOT/tests/extension
PROCESSED=$H_DIR/processed.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"
. "$HERE/delivery.sh"
super() { psql -XAtq -v ON_ERROR_STOP=1 "$PG_SUPER_URL" -c "$1"; }
slots() { super "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'chat_outbox_wake%'"; }
heard() { # notifications a LISTENing session hears around one send
	psql -Xq -v ON_ERROR_STOP=1 "$PGURL" -c "LISTEN chat_outbox_relay" -c "SELECT consumers.send_message(4, 'listened')" \
		-c "SELECT 1" 2>&1 | grep -c 'Asynchronous notification' || true
}

# 1. no NOTIFY with wake = 'wal'
expect_eq "notifications heard with wake = 'wal'" 0 "$(heard)"
harness_psql "UPDATE chat_outbox.settings SET wake = 'notify'"
[ "$(heard)" -ge 1 ] || fail "with wake = 'notify' the LISTENing session heard nothing (the check cannot fail)"
harness_psql "UPDATE chat_outbox.settings SET wake = 'wal'"
echo "ok   wake = 'wal' sends no notification, wake = 'notify' does"

# 2. woken by the stream alone
node "$HERE/consume.mjs" "$PROCESSED" >"$H_DIR/consumer.log" 2>&1 &
harness_track $!
harness_wait_for 20 grep -q ready "$H_DIR/consumer.log"
relay_start one --poll-interval 3600000
harness_wait_for 20 grep -q "logical wake-up streaming" "$H_DIR/relay-one.log"
verify_delivered "messages sent before the stream started" # the relay's first round
node "$HERE/send.mjs" 200 wal 2 >"$H_DIR/sender.log" 2>&1
verify_delivered "woken by the logical stream alone"
harness_psql "SELECT payload ->> 'id' FROM consumers.outbox ORDER BY id" >"$H_DIR/outbox-order.txt"
awk '!seen[$0]++' "$PROCESSED" | diff -q "$H_DIR/outbox-order.txt" - >/dev/null || fail "processed out of outbox order"
echo "ok   in outbox order"

# 3. a temporary slot that releases what the relay read
expect_eq "temporary slots of the relay" 1 "$(super "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'chat_outbox_wake%' AND temporary AND active")"
after=$(super "SELECT pg_current_wal_lsn()")
confirmed() { [ "$(super "SELECT confirmed_flush_lsn >= '$after' FROM pg_replication_slots WHERE slot_name LIKE 'chat_outbox_wake%'")" = t ]; }
harness_wait_for 20 confirmed || fail "the slot's confirmed position stayed behind $after"
echo "ok   the slot's confirmed position reached $after"

# 4. a fast restart of Postgres during a Redis outage does not wait for the relay's stream (a
# walsender waits at shutdown until its client confirmed everything, here without a timeout, and a
# relay backing off from Redis must still answer it), and the stream comes back
super "ALTER SYSTEM SET wal_sender_timeout = 0"
super "SELECT pg_reload_conf()" >/dev/null
harness_redis_stop
harness_psql "SELECT consumers.send_message(6, 'during the outage')" >/dev/null
harness_wait_value 20 = 'backing off' relay_status relay_state
harness_pg_ctl -t 20 -w restart -m fast >/dev/null || fail "pg_ctl restart -m fast did not finish within 20 s under the relay"
harness_redis_start_again
harness_wait_value 30 -ge 2 relay_log_count "logical wake-up streaming"
sent=$(harness_psql "SELECT id FROM consumers.send_message(6, 'after a restart')")
harness_wait_for 20 grep -q "$sent" "$PROCESSED"
verify_delivered "woken by the stream after a restart"

# 5. a relay that is gone holds no slot
kill -9 "$RELAY_PID"
harness_wait_value 20 = 0 slots
echo "ok   SIGKILLed relay: its slot is gone"

# 6. no REPLICATION: logged once, relayed by the poll; back when granted
super "ALTER ROLE chat_owner NOREPLICATION"
relay_start two --poll-interval 200
# the server's refusal: 15's wording, then 16's and later's
refusals() { grep -cE 'must be superuser or replication role|permission denied to start WAL sender' "$H_DIR/postgres.log" || true; }
harness_wait_value 30 -ge 2 refusals
expect_eq "stream failures logged" 1 "$(grep -c 'logical wake-up unavailable' "$H_DIR/relay-two.log" || true)"
harness_psql "SELECT consumers.send_message(5, 'polled')" >/dev/null
verify_delivered "relayed by the poll while the stream is refused"
super "ALTER ROLE chat_owner REPLICATION"
harness_wait_for 40 grep -q "logical wake-up streaming" "$H_DIR/relay-two.log"
expect_eq "temporary slots" 1 "$(slots)"
echo "ok   the stream is back once REPLICATION is granted"

# 7. a commit heard before it is visible. A synchronous standby that never answers holds the
# sender's commit after its WAL is flushed and streamed, before it is visible; the wait is cancelled
# after 300 ms (the commit stands: it is local), which is when the row becomes visible.
kill "$RELAY_PID"
super "ALTER DATABASE chat SET synchronous_commit = local" # the relay's own commits never wait
super "ALTER SYSTEM SET synchronous_standby_names = 'nobody'"
super "SELECT pg_reload_conf()" >/dev/null
relay_start three --poll-interval 3600000
harness_wait_for 30 grep -q "logical wake-up streaming" "$H_DIR/relay-three.log"
psql -XAtq "$PGURL" -c "SET synchronous_commit = on" -c "SELECT id FROM consumers.send_message(7, 'held in its commit')" \
	>"$H_DIR/held.txt" 2>"$H_DIR/held.err" &
sender=$!
held() { [ "$(super "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")" = 1 ]; }
harness_wait_for 20 held || fail "the send did not wait for the synchronous standby"
sleep 0.3 # the hold itself: the relay was woken by the stream meanwhile and claimed nothing
super "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'" >/dev/null
wait "$sender" || true
held_id=$(grep -E '^[0-9a-f-]{36}$' "$H_DIR/held.txt") || fail "the held send returned no id: $(cat "$H_DIR/held.err")"
harness_wait_for 60 grep -q "$held_id" "$PROCESSED" ||
	fail "a commit heard before it was visible waited for the poll (an hour; not relayed within 60 s)"
super "ALTER SYSTEM RESET synchronous_standby_names"
super "SELECT pg_reload_conf()" >/dev/null
verify_delivered "a commit heard before it was visible"

# 8. a standby listed first: both of the relay's connections skip it
. "$H_ROOT/tests/ha/standby.sh"
kill "$RELAY_PID"
STANDBY_PORT=$(harness_free_port)
standby_build "$H_DIR/standby" "$STANDBY_PORT" "$PG_PORT"
harness_wait_value 20 = t psql -XAtq "postgresql://postgres@127.0.0.1:$STANDBY_PORT/chat" -c "SELECT pg_is_in_recovery()"
PGURL="postgresql://chat_owner@127.0.0.1:$STANDBY_PORT,127.0.0.1:$PG_PORT/chat" relay_start four --poll-interval 3600000
harness_wait_for 30 grep -q "logical wake-up streaming" "$H_DIR/relay-four.log" ||
	fail "the relay given a standby first did not stream from the primary: $(tail -3 "$H_DIR/relay-four.log")"
standby_id=$(harness_psql "SELECT id FROM consumers.send_message(8, 'a standby listed first')")
harness_wait_for 60 grep -q "$standby_id" "$PROCESSED" ||
	fail "the relay given a standby first did not relay (an hour's poll; not within 60 s): $(tail -3 "$H_DIR/relay-four.log")"
verify_delivered "a standby listed first"
