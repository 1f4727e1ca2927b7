#!/usr/bin/env bash
# tests/extension/inbox_retention.sh - chat_outbox.inbox_retention: the relay deletes inbox rows
# received longer ago than the setting, 1,000 lowest seqs per transaction, and never a younger
# one; catch-up (seq > offset) then starts at the oldest row kept. Outbox retention off here, so
# the inbox purge is shown to run on its own; a service whose inbox was dropped holds nothing back.
# An old edit whose message never came waits for it (inbox_waiting) until the purge deletes the edit.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-inbox-retention
harness_redis_start
harness_pg_start "" "chat_outbox.retention = 0" "chat_outbox.inbox_retention = '2s'"


# A service whose inbox is gone: its purge fails (logged once), the others' purges go on
q "SELECT chat_outbox.create_service('aaa_noinbox')" >/dev/null
q "DROP TABLE aaa_noinbox.inbox"

# In seq order: 5,000 rows received a day ago, 300 "young" ones (received in the future, so they
# stay young however slow the machine), 2,000 more old ones behind them, then 100,000 young ones.
ins() {
	q "INSERT INTO workers.inbox (message_id, chat_id, body, received_at)
	   SELECT gen_random_uuid(), 1, '$1 ' || g, now() + interval '$2' FROM generate_series(1, $3) g ORDER BY g"
}
ins old '-1 day' 5000
ins young '1 day' 300
ins late-old '-1 day' 2000
# an edit received as long ago whose message never came: it waits for its message (checked before its
# transaction commits, so the purge cannot have deleted it yet)
expect_eq "an old edit whose message never came waits for it" 1 "$(psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "BEGIN" \
	-c "INSERT INTO workers.inbox (message_id, chat_id, body, target, kind, version, edited_at, received_at)
		VALUES (gen_random_uuid(), 1, 'an edit', gen_random_uuid(), 'edited', 1, now(), now() - interval '1 day')" \
	-c "SELECT count(*) FROM workers.inbox_waiting" -c "COMMIT")"
ins young '1 day' 100000
old() { q "SELECT count(*) FROM workers.inbox WHERE received_at < now()"; }
no_old() { [ "$(old)" -eq 0 ]; }
harness_wait_for 60 no_old || fail "old inbox rows left: $(old)"
[ "$(q "SELECT count(*) FROM workers.inbox")" -eq 100300 ] || fail "young rows deleted: $(q "SELECT count(*) FROM workers.inbox") left"
echo "ok   7,000 old inbox rows deleted (2,000 of them behind 300 young ones); all 100,300 young ones kept"
expect_eq "the purge deleted the old edit, and nothing waits any more" "0|0" \
	"$(q "SELECT count(*), (SELECT count(*) FROM workers.inbox_waiting) FROM workers.inbox WHERE target IS NOT NULL")"

# Each purge round looks at the 1,000 lowest seqs only, so over 4 s the purge reads a few thousand
# entries of the seq index, not the 100,300 young rows per round. (1,000 young rows in a row at the
# front would hold the purge back until they age out; the inbox takes rows in received order.) (The worker flushes its
# statistics at most once a second: the deletions above are counted first.)
seq_reads() { q "SELECT idx_tup_read FROM pg_stat_user_indexes WHERE schemaname = 'workers' AND indexrelname = 'inbox_seq_key'"; }
sleep 2
r0=$(seq_reads)
sleep 4
reads=$(($(seq_reads) - r0))
[ "$reads" -ge 1000 ] || fail "no inbox purge round ran in 4 s ($reads entries read)"
[ "$reads" -le 40000 ] || fail "the inbox purge walked the young rows: $reads entries read in 4 s"
echo "ok   inbox purge rounds read $reads seq-index entries in 4 s with 100,300 young rows"
n=$(grep -c 'purging aaa_noinbox.inbox failed' "$H_DIR/postgres.log" || true)
[ "$n" -eq 1 ] || fail "the failing purge of aaa_noinbox.inbox was logged $n times"
echo "ok   the failing purge of another service's dropped inbox was logged once and held nothing back"

# catch-up from an offset before the oldest kept row returns the kept rows only, from the oldest
first_kept=$(q "SELECT min(seq) FROM workers.inbox")
[ "$first_kept" -eq 5001 ] || fail "oldest kept seq $first_kept, want 5001"
first_replayed=$(q "SELECT seq FROM workers.inbox WHERE chat_id = ANY('{1}'::bigint[]) AND seq > 0 ORDER BY seq LIMIT 1")
[ "$first_replayed" -eq "$first_kept" ] || fail "catch-up from 0 starts at $first_replayed"
echo "ok   a client resuming from 0 gets the kept rows, from seq $first_kept on"

# messages keep flowing into the inbox beside the purge (relay + sent rows untouched by it)
q "SELECT consumers.send_message(7, 'after the purge')" >/dev/null
harness_wait_for 20 bash -c "[ \$(redis-cli -p $REDIS_PORT LLEN bull:chat-messages:wait) -eq 1 ]"
[ "$(q "SELECT count(*) FROM consumers.outbox")" -eq 1 ] || fail "outbox rows purged with retention 0"
echo "ok   relaying goes on; the outbox (retention 0) is untouched"
echo PASS
