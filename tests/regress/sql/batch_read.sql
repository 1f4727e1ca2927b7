-- batch_read: the in-database relay reads a batch with its own kept plans in the usual case
-- (extension/src/pg/batch_read.cpp) and calls chat_outbox.relay_batch in every other; both read the
-- window query of chat_outbox.relay_window_query with the generations of chat_outbox.window_generations.
CREATE EXTENSION chat_outbox;
\set SHOW_CONTEXT never
-- the window query reads the service's generations (pruned to those window_generations names)
SELECT strpos(chat_outbox.relay_window_query('consumers'), 'consumers.outbox_events e') > 0 AS its_generations,
	strpos(chat_outbox.relay_window_query('workers'), 'consumers.') = 0 AS no_other_service;
-- the generations that can hold a window's rows: without the rotation's row (a service whose first
-- rotation step has not run yet) all three; a fresh service only its current one; a closed
-- generation while a cursor's tick may not see all its writers
SELECT chat_outbox.window_generations(NULL::chat_outbox.outbox_rotation, '1:1:') AS no_row;
SELECT count(*) AS rotation_rows FROM chat_outbox.outbox_rotation WHERE service = 'consumers';
SELECT chat_outbox.outbox_rotate('consumers', 3600) AS waits;
SELECT chat_outbox.window_generations(r, '1:1:') AS fresh FROM chat_outbox.outbox_rotation r WHERE r.service = 'consumers';
SELECT chat_outbox.window_generations(r, '10:10:') AS closed_after_tick, chat_outbox.window_generations(r, '30:30:') AS closed_before_tick
FROM (SELECT (service, 0, started_at, '{20,NULL,NULL}', '{f,t,f}', waiting, truncated, NULL)::chat_outbox.outbox_rotation AS r
	FROM chat_outbox.outbox_rotation WHERE service = 'consumers') x;
-- the first pass makes the cursors (relay_batch); then the usual case, one cursor state: no call of it
SET track_functions = 'pl';
SELECT cardinality(chat_outbox.relay_pass('consumers')) AS first_pass;
SELECT count(*) AS cursors FROM chat_outbox.outbox_cursors WHERE service = 'consumers';
-- (the counts of pg_stat_xact_user_functions are those not flushed yet: flushed when this statement ends)
SELECT pg_stat_force_next_flush();
SELECT body FROM consumers.send_message(1, 'a');
BEGIN;
SELECT cardinality(chat_outbox.relay_pass('consumers')) AS relayed;
SELECT coalesce(sum(calls), 0) AS relay_batch_calls FROM pg_stat_xact_user_functions
WHERE schemaname = 'chat_outbox' AND funcname = 'relay_batch';
COMMIT;
-- cursors apart (made under two partitions, one moved alone): relay_batch's windows, one per state
SELECT count(*) AS moved_alone FROM chat_outbox.relay_batch('consumers', 100, 2, ARRAY[1]);
SELECT partition, done_snap::text = (SELECT done_snap::text FROM chat_outbox.outbox_cursors WHERE service = 'consumers' AND partition = 0) AS same_state
FROM chat_outbox.outbox_cursors WHERE service = 'consumers' ORDER BY partition;
SELECT body FROM consumers.send_message(1, 'b');
SELECT body FROM consumers.send_message(2, 'c');
\c
SET track_functions = 'pl';
BEGIN;
SELECT cardinality(chat_outbox.relay_pass('consumers')) AS relayed;
SELECT coalesce(sum(calls), 0) AS relay_batch_calls FROM pg_stat_xact_user_functions
WHERE schemaname = 'chat_outbox' AND funcname = 'relay_batch';
COMMIT;
SELECT payload->>'body' AS body, sent_at IS NOT NULL AS sent FROM consumers.outbox ORDER BY id;
DROP EXTENSION chat_outbox CASCADE;
