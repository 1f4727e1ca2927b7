-- pass_checks: what a relay pass refuses, and where a change of the partition count starts
-- (sql/parts/outbox.sql, chat_outbox.pass_checks and chat_outbox.earliest_tick).
CREATE EXTENSION chat_outbox;
\set SHOW_CONTEXT never
SELECT body FROM consumers.send_message(1, 'one');
SELECT chat_outbox.relay_pass('consumers') AS sent;
-- a pass in a transaction that wrote to the outbox would send its rows before they commit: refused
BEGIN;
SELECT body FROM consumers.send_message(1, 'mine');
SELECT chat_outbox.relay_pass('consumers');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- and the same through relay_batch (chat-outbox-relay's read)
BEGIN;
SELECT body FROM consumers.send_message(1, 'mine');
SELECT count(*) FROM chat_outbox.relay_batch('consumers', 100, 0, ARRAY[]::int[]);
ROLLBACK;
-- a transaction that wrote elsewhere only may pass
BEGIN;
SELECT chat_outbox.add_member(1, 'ann');
SELECT chat_outbox.relay_pass('consumers') AS sent;
COMMIT;
-- after a pass, its transaction cannot write to the outbox
BEGIN;
SELECT chat_outbox.relay_pass('consumers') AS sent;
SELECT body FROM consumers.send_message(1, 'after the pass');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT count(*) AS unsent FROM consumers.outbox WHERE sent_at IS NULL;
-- an id sequence that caches ids lets a later message overtake an earlier one: refused until CACHE 1
ALTER SEQUENCE consumers.outbox_id_seq CACHE 20;
SELECT body FROM consumers.send_message(1, 'cached');
SELECT chat_outbox.relay_pass('consumers');
\echo :LAST_ERROR_SQLSTATE
ALTER SEQUENCE consumers.outbox_id_seq CACHE 1;
SELECT cardinality(chat_outbox.relay_pass('consumers')) AS sent;
-- an outbox that is this database's is not rebased; forced (a copy whose origin looks the same), the
-- cursors made here say nothing of its rows: every row goes again, in id order, and is sent
SELECT chat_outbox.rebase_outbox('consumers') AS not_moved;
SELECT chat_outbox.rebase_outbox('consumers', force => true) AS to_send_again;
SELECT chat_outbox.relay_pass('consumers') AS sent_again;
SELECT count(*) FILTER (WHERE sent_at IS NULL) AS unsent, count(DISTINCT origin) AS origins
FROM consumers.outbox, chat_outbox.outbox_origins WHERE service = 'consumers';
-- the earliest of two ticks with the same xmin and xmax is the one that saw more running
INSERT INTO chat_outbox.outbox_cursors (service, partition, partitions, done_snap, done_mpre) VALUES
	('workers', 0, 2, '100:200:120', 7), ('workers', 1, 2, '100:200:120,150', 5);
SELECT done_snap, done_mpre FROM chat_outbox.earliest_tick('workers');
DELETE FROM chat_outbox.outbox_cursors WHERE service = 'workers';
-- so a change of the partition count starts there: two cursors (a shard's outage left them apart)
-- whose ticks differ only in that the row's transaction ended between them; the row is sent
-- under the new count, not skipped
SELECT body FROM workers.send_message(1, 'between the ticks');
INSERT INTO chat_outbox.outbox_cursors (service, partition, partitions, done_snap, done_mpre)
	SELECT 'workers', p, 2, format('%s:%s:%s', e.xid, e.xid::text::bigint + 1, CASE WHEN p = 1 THEN e.xid::text END)::pg_snapshot,
		e.id - 1
	FROM workers.outbox_events e, generate_series(0, 1) p;
SELECT payload->>'body' AS body FROM chat_outbox.relay_batch('workers', 100, 1, ARRAY[]::int[]);
DROP EXTENSION chat_outbox CASCADE;
