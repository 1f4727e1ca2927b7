#!/usr/bin/env bash
# consumer.inbox_plan: the inbox write costs each row the same whatever the inbox's statistics said when
# the daemon's session planned it. An inbox vacuumed while empty (a quiet service whose rows the purge
# removed) looks like a table of no pages to the planner; a session that plans its statements then
# keeps plans that scan the whole inbox, and with the inbox_apply trigger's lookup that is one scan per
# inserted row, until autovacuum's next analyze: a backlog then drains in time quadratic in its size.
# The trigger runs for a message only while a change waits for its message, so one waits here (an edit
# of a message that never comes): every message of the drain then runs the lookup.
# The daemon's inbox write walks the indexes whatever the statistics say, and plans its insert once
# (a generic plan, made here on the inbox that looks empty), so the insert's own read of rows that were
# already there must be a probe per row too, not a join over the whole inbox. Checked by what each
# statement reads (buffers, from pg_stat_statements), which does not depend on the machine's speed.
. "$(dirname "$0")/../harness/lib.sh"
harness_init daemon-inbox-plan
harness_redis_start
harness_pg_start "" "shared_preload_libraries = 'chat_outbox,pg_stat_statements'" "pg_stat_statements.track = all"
daemon_export_settings
q "CREATE EXTENSION pg_stat_statements"
q "ALTER TABLE workers.inbox SET (autovacuum_enabled = off)" # no analyze behind the test's back
q "VACUUM workers.inbox"
expect_eq "the inbox looks empty to the planner" "0|0" "$(q "SELECT relpages, reltuples FROM pg_class WHERE oid = 'workers.inbox'::regclass" | tr -d ' ')"
q "INSERT INTO workers.inbox (message_id, chat_id, body, target, kind, version, edited_at)
	VALUES (gen_random_uuid(), 1, 'an edit', gen_random_uuid(), 'edited', 1, now())" >/dev/null
expect_eq "a change waits for its message" 1 "$(q "SELECT count(*) FROM workers.inbox_waiting")"
q "SELECT pg_stat_statements_reset()" >/dev/null

N=4000
peer add t-plan $N >/dev/null
daemon_start daemon.log --service workers --queue t-plan
wait_inbox workers $((N + 1)) 120 # and the edit
# the trigger's lookup of changes that came before their message, once per inserted message
lookup=$(q "SELECT sum(calls), round(sum(shared_blks_hit + shared_blks_read)::numeric / sum(calls), 2) FROM pg_stat_statements
	WHERE NOT toplevel AND query LIKE '%FROM workers.inbox t%WHERE t.target OPERATOR(pg_catalog.=)%ORDER BY%'")
echo "trigger lookup: calls|buffers per call = $lookup"
expect_eq "trigger lookups" $N "${lookup%%|*}"
# an index probe of the (empty) partial index reads one or two pages; a scan reads half the inbox on average
awk -v b="${lookup#*|}" 'BEGIN { exit !(b <= 3) }' || fail "the trigger's lookup reads ${lookup#*|} buffers per row: it scans the inbox"
insert=$(q "SELECT round(sum(shared_blks_hit + shared_blks_read)::numeric / sum(rows), 2) FROM pg_stat_statements
	WHERE toplevel AND query LIKE 'WITH input AS%INSERT INTO \"workers\".inbox%'")
echo "inbox insert: buffers per row = $insert (the trigger's included)"
awk -v b="$insert" 'BEGIN { exit !(b <= 20) }' || fail "the inbox insert reads $insert buffers per row"
echo "ok   $N rows into an inbox vacuumed empty: every lookup an index probe"
daemon_stop
echo "PASS"
