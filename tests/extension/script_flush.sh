#!/usr/bin/env bash
# tests/extension/script_flush.sh - Redis forgets the batch-add script under a connected relay.
# SCRIPT FLUSH (what a Redis that restarts behind a proxy, or fails over to a replica without the
# script cache, looks like to a client that keeps its connection) answers the relay's next EVALSHA
# with NOSCRIPT. The relay must load the script again and send that same batch, on the same pass:
#   1. flushed again and again while three senders stream messages, passes of several batches
#      (batch_size = 4), so NOSCRIPT lands on first and later batches of a pass;
#   2. flushed as a 2,000-row backlog lands in one statement, and again while it drains. (Not over a
#      relay paused with relay_enabled = off: a pause lands between passes or, within 2 s, after the
#      batch in flight; a fresh connection's handshake would load the script, so a flush across a
#      reconnect rightly costs no reload.)
# Checks: every stored message processed exactly once by a real bullmq Worker, in each sender's
# order per chat; no batch sent twice (no `duplicated` event: a rolled-back pass would resend);
# no outage logged; exactly one log line per flush.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-script-flush
harness_redis_start
harness_pg_start "" "chat_outbox.batch_size = 4"
export REDIS_URL PGURL
HERE=$H_ROOT/tests/extension
PROCESSED=$H_DIR/processed.txt DUPLICATED=$H_DIR/duplicated.txt
: >"$PROCESSED"
cd "$H_ROOT/tests"

. "$HERE/delivery.sh"
reloads() { grep -c 'lost the batch-add script' "$H_DIR/postgres.log" || true; }
reloads_are() { [ "$(reloads)" -eq "$1" ]; }
flushes=0
flush() { # flush: Redis drops every script; the relay's next batch must reload it, logged once
	rcli SCRIPT FLUSH >/dev/null
	flushes=$((flushes + 1))
}

node "$HERE/consume.mjs" "$PROCESSED" "$DUPLICATED" >"$H_DIR/consumer.log" 2>&1 &
harness_track $!
harness_wait_for 30 grep -q ready "$H_DIR/consumer.log"

# Senders run until every flush is done, so each flush is followed by more batches.
senders=()
for s in 1 2 3; do
	node "$HERE/send.mjs" 1000000 "s$s" 1 >"$H_DIR/sender$s.log" 2>&1 &
	senders+=($!)
	harness_track $!
done
harness_wait_for 30 stored_at_least 50
# Flush only once the relay has delivered: a flush before its first connection would be undone by
# that connection's handshake (SCRIPT LOAD), and rightly cost no reload.
processed_at_least() { [ "$(wc -l <"$PROCESSED")" -ge "$1" ]; }
harness_wait_for 30 processed_at_least 10

# 1. while messages stream in
for _ in 1 2 3 4 5 6; do
	flush
	harness_wait_for 30 reloads_are $flushes || fail "streaming: $(reloads) reloads logged after $flushes flushes"
done
echo "ok   streaming: $flushes flushes, each reloaded and logged once, at $(stored) messages stored"

# 2. over a backlog: flushed as it lands, then during the drain
flush
harness_psql "SELECT count(consumers.send_message(g % 5 + 1, 'backlog-' || g)) FROM generate_series(1, 2000) g" >/dev/null
harness_wait_for 30 reloads_are $flushes || fail "backlog: $(reloads) reloads logged after $flushes flushes"
for _ in 1 2 3; do
	flush
	harness_wait_for 30 reloads_are $flushes || fail "drain: $(reloads) reloads logged after $flushes flushes"
done
echo "ok   backlog: $((flushes - 6)) flushes around a 2000-row drain, each reloaded and logged once"

for pid in "${senders[@]}"; do kill "$pid"; wait "$pid" 2>/dev/null || true; done

verify_delivered "$flushes flushes"

# each sender's order per chat (a sender waits for each commit; the backlog is one statement)
out_of_order=$(psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" <<SQL
CREATE TEMP TABLE processed (pos bigint GENERATED ALWAYS AS IDENTITY, id uuid);
\copy processed (id) FROM '$PROCESSED'
SELECT count(*) FILTER (WHERE n < prev) || ' ' || count(*) FROM (
	SELECT split_part(m.body, '-', 2)::bigint AS n,
		   lag(split_part(m.body, '-', 2)::bigint) OVER (PARTITION BY m.chat_id, split_part(m.body, '-', 1) ORDER BY p.pos) AS prev
	FROM processed p JOIN consumers.messages m USING (id)) s;
SQL
)
[ "$out_of_order" = "0 $(stored)" ] || fail "order: $out_of_order (messages out of order, messages compared)"
echo "ok   every chat in each sender's order"

# nothing sent twice, no outage, one log line per flush
[ ! -s "$DUPLICATED" ] || fail "$(wc -l <"$DUPLICATED") duplicated events: a batch was sent twice"
[ "$(grep -c 'redis unreachable' "$H_DIR/postgres.log" || true)" -eq 0 ] || fail "an outage was logged"
reloads_are $flushes || fail "$(reloads) reloads logged for $flushes flushes"
[ "$(relay_status relay_state)" = running ] || fail "relay state $(relay_status relay_state)"
echo "ok   no batch sent twice, no outage, $(reloads) reload lines for $flushes flushes: $(grep -o 'chat_outbox relay: redis.*script.*' "$H_DIR/postgres.log" | head -1)"

# the duplicate check above can fail: rows sent again do show up as duplicated events
harness_psql "UPDATE consumers.outbox SET sent_at = NULL WHERE id IN (SELECT id FROM consumers.outbox ORDER BY id LIMIT 3)"
duplicated_events() { wc -l <"$DUPLICATED"; }
harness_wait_value 30 -eq 3 duplicated_events || fail "re-sent rows not seen as duplicated"
echo "ok   control: 3 rows sent again show as 3 duplicated events"
