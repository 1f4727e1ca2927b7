#!/usr/bin/env bash
# tests/extension/retention.sh - the purge of sent rows does work bounded by its batch, not by the
# outbox: rows younger than chat_outbox.retention are never deleted and never walked over in bulk,
# an old row behind a late-sent young one is still deleted, and the purge keeps up while sends stream.
# (status.sh covers the plain case: sent rows go, messages stay.)
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-retention
harness_redis_start
harness_pg_start "" "chat_outbox.retention = '2s'" # a purge round every second

YOUNG=200000
# index entries the outbox's primary key has handed out, as the relay's flushed statistics count them
pkey_reads() { q "SELECT idx_tup_read FROM pg_stat_user_indexes WHERE schemaname = 'consumers' AND indexrelname = 'outbox_pkey'"; }

# Rows already sent (the relay leaves them alone), in id order: one sent late (a long transaction's
# row, younger than retention) in front of 5,000 old ones, then $YOUNG recent ones. sent_at in the
# future keeps "young" young for the whole test however slow the machine is.
q "INSERT INTO consumers.outbox (event, payload, sent_at)
   SELECT 'message.created', jsonb_build_object('n', g),
          CASE WHEN g BETWEEN 2 AND 5001 THEN now() - interval '1 day' ELSE now() + interval '1 day' END
   FROM generate_series(1, 5001 + $YOUNG) g ORDER BY g" >/dev/null

old() { q "SELECT count(*) FROM consumers.outbox WHERE sent_at < now()"; }
no_old_rows() { [ "$(old)" -eq 0 ]; }
harness_wait_for 30 no_old_rows || fail "old rows left: $(old)"
[ "$(q "SELECT count(*) FROM consumers.outbox")" -eq $((YOUNG + 1)) ] || fail "young rows deleted: $(q "SELECT count(*) FROM consumers.outbox") left"
echo "ok   5,000 old rows behind a late-sent one deleted; all $((YOUNG + 1)) young rows kept"

# Rounds keep running every second; each looks at one window of 1,000 rows, so over 4 s the purge
# reads a few thousand index entries. Walking the young rows read 200,000 a round (825,009 in 4 s).
# The worker flushes its statistics at most once a second: the deletions above are counted first.
sleep 2
r0=$(pkey_reads)
sleep 4
r1=$(pkey_reads)
reads=$((r1 - r0))
echo "     primary-key entries read in 4 s of purge rounds: $reads"
[ "$reads" -ge 1000 ] || fail "no purge round ran in 4 s ($reads entries read)"
[ "$reads" -le 40000 ] || fail "the purge walked the young rows: $reads entries read in 4 s"
echo "ok   purge rounds read $reads index entries in 4 s with $YOUNG young rows in the outbox"

# and the relay still relays while the outbox is full of rows it must keep
q "SELECT consumers.send_message(7, 'after the purge test')" >/dev/null
all_sent() { [ "$(q "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL")" -eq 0 ]; }
harness_wait_for 20 all_sent
[ "$(rcli LLEN bull:chat-messages:wait)" -eq 1 ] || fail "the new message was not relayed"
echo "ok   relaying goes on beside the purge"

# While commits stream in, every relay round is followed by a coalescing wait; the purge must run
# in those rounds too, not only in the gaps of the stream (it did only there: rows due piled up,
# 4,000 to 37,000 in 20 s at 4,000 sends/s). Retention is 2 s and a purge round comes every second,
# so a row sent 5 s ago is one the purge has had at least two chances to delete.
q "DELETE FROM consumers.outbox" >/dev/null # the young rows above would hold the purge back
printf '%s\n' "SELECT consumers.send_message(1, 'stream');" >"$H_DIR/send.pgbench"
"$PG_BIN/pgbench" -n -f "$H_DIR/send.pgbench" -c 4 -j 2 -T 12 "$PGURL" >"$H_DIR/pgbench.log" 2>&1 &
stream=$!
harness_track $stream
sleep 10
overdue=$(q "SELECT count(*) FROM consumers.outbox WHERE sent_at < now() - interval '5 s'")
total=$(q "SELECT count(*) FROM consumers.outbox")
wait $stream
echo "     after 10 s of a send stream: $total rows in the outbox, $overdue of them sent over 5 s ago ($(grep -o 'tps = [0-9]*' "$H_DIR/pgbench.log"))"
[ "$overdue" -le 200 ] || fail "the purge fell behind a send stream: $overdue rows sent over 5 s ago still in the outbox"
echo "ok   the purge keeps up while commits stream in"
