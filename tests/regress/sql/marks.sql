-- marks: what Redis kept (sql/parts/outbox.sql, chat_outbox.relay_marks and chat_outbox.relay_rewind;
-- docs/architecture.md, 'What Redis kept: the marks'). Marks hold xids: only what they say is shown.
CREATE EXTENSION chat_outbox;
\set SHOW_CONTEXT never
SELECT body FROM consumers.send_message(1, 'one');
SELECT cardinality(chat_outbox.relay_pass('consumers')) AS sent;
-- the pass's call wrote its cursor's state as its mark, and the cursor keeps it as marked
SELECT (marked::jsonb ->> 'made') = made::text AS own_mark FROM chat_outbox.outbox_cursors WHERE service = 'consumers';
SELECT marked AS m1 FROM chat_outbox.outbox_cursors WHERE service = 'consumers' \gset
SELECT body FROM consumers.send_message(1, 'two');
SELECT body FROM consumers.send_message(2, 'three');
SELECT cardinality(chat_outbox.relay_pass('consumers')) AS sent;
SELECT marked AS m2 FROM chat_outbox.outbox_cursors WHERE service = 'consumers' \gset
-- Redis came back holding m1 (it lost the second pass's jobs): the cursor goes back, both rows go again
BEGIN;
SELECT * FROM chat_outbox.relay_rewind('consumers', '{0}', ARRAY[:'m1']);
SELECT array_agg(id ORDER BY id) AS unsent FROM consumers.outbox WHERE sent_at IS NULL;
SELECT marked = :'m1' AS expects_what_redis_holds FROM chat_outbox.outbox_cursors WHERE service = 'consumers';
-- Redis did not lose them here: its mark is m2, not the m1 the cursor now expects, so the pass's call
-- refuses before any write (the worker's next pass would read the marks again)
SELECT chat_outbox.relay_pass('consumers') AS sent_again;
ROLLBACK;
-- Redis holds the last mark: nothing moves
SELECT count(*) AS moved FROM chat_outbox.relay_rewind('consumers', '{0}', ARRAY[:'m2']);
-- no mark, a mark of another cursor's making (a change of the partition count, a rebase), or a string
-- that is no mark: no evidence, nothing moves; the cursor expects what Redis holds
BEGIN;
SELECT count(*) AS moved FROM chat_outbox.relay_rewind('consumers', '{0}', ARRAY[NULL]);
SELECT marked IS NULL AS expects_none FROM chat_outbox.outbox_cursors WHERE service = 'consumers';
SELECT count(*) AS moved FROM chat_outbox.relay_rewind('consumers', '{0}',
	ARRAY[jsonb_set(:'m1'::jsonb, '{made}', to_jsonb(gen_random_uuid()))::text]);
SELECT count(*) AS moved FROM chat_outbox.relay_rewind('consumers', '{0}', ARRAY['not a mark']);
SELECT count(*) AS moved FROM chat_outbox.relay_rewind('consumers', '{0}', ARRAY['{"made": 1}']);
SELECT count(*) AS unsent FROM consumers.outbox WHERE sent_at IS NULL;
ROLLBACK;
-- a mark behind only by batches without this partition's rows moves nothing: two partitions, a row of
-- partition 1 only since partition 0's mark
SELECT chat_outbox.create_service('marks', queue => 'marks-q', partitions => 2);
-- (a service's first pass makes its cursors under one partition; the next re-makes them under two)
SELECT body FROM marks.send_message(2, 'first');
SELECT cardinality(chat_outbox.relay_pass('marks')) AS sent;
SELECT body FROM marks.send_message(2, 'p0');
SELECT cardinality(chat_outbox.relay_pass('marks')) AS sent;
SELECT marked AS p0 FROM chat_outbox.outbox_cursors WHERE service = 'marks' AND partition = 0 \gset
SELECT body FROM marks.send_message(1, 'p1');
SELECT cardinality(chat_outbox.relay_pass('marks')) AS sent;
SELECT marked = :'p0' AS p0_mark_unchanged FROM chat_outbox.outbox_cursors WHERE service = 'marks' AND partition = 0;
SELECT count(*) AS moved FROM chat_outbox.relay_rewind('marks', '{0}', ARRAY[:'p0']);
-- relay_marks: for the partitions given, under the cursors' count only, what the call expects and the
-- state it writes, now marked
BEGIN;
SELECT partition, expect = :'p0' AS expects_marked, mark = expect AS unchanged
	FROM chat_outbox.relay_marks('marks', 2, '{0}');
SELECT count(*) AS under_another_count FROM chat_outbox.relay_marks('marks', 4, '{0,1}');
ROLLBACK;
-- only the relays call them
CREATE ROLE marks_app;
SET ROLE marks_app;
SELECT * FROM chat_outbox.relay_rewind('marks', '{0}', ARRAY[NULL]);
SELECT * FROM chat_outbox.relay_marks('marks', 2, '{0}');
RESET ROLE;
DROP ROLE marks_app;
DROP SCHEMA marks CASCADE;
DROP EXTENSION chat_outbox CASCADE;
