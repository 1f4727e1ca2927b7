-- outbox: the write-once outbox's SQL (sql/parts/outbox.sql): each row written once with its
-- transaction's xid and its chat_id, the view's derived sent_at and its operator writes, the cursor a
-- pass moves, the rotation's steps and what they wait for.
CREATE EXTENSION chat_outbox;
\set SHOW_CONTEXT never
-- chat_id_of and partition_of: the rule of common/partitions.hpp on the stored column
SELECT chat_outbox.chat_id_of('{"chat_id": 42}') AS int, chat_outbox.chat_id_of('{"chat_id": "42"}') AS string,
	chat_outbox.chat_id_of('{"chat_id": 1.5}') AS fraction, chat_outbox.chat_id_of('{"chat_id": 9223372036854775808}') AS too_big,
	chat_outbox.chat_id_of('{}') AS missing;
SELECT chat_outbox.partition_of(-7, 4) AS neg, chat_outbox.partition_of(7, 4) AS pos, chat_outbox.partition_of(NULL, 4) AS null_chat;
-- a send writes one row: its transaction's xid (drawn before the id), its chat_id, the current generation
BEGIN;
SELECT body FROM consumers.send_message(5, 'one');
SELECT xid = pg_current_xact_id() AS own_xid, chat_id, gen, sent_at IS NULL AS unsent, refused FROM consumers.outbox;
COMMIT;
SELECT unsent FROM chat_outbox.status WHERE service = 'consumers';
-- a pass sends it: sent_at comes from the cursor; the row itself is not written again
SELECT cardinality(chat_outbox.relay_pass('consumers')) AS relayed;
SELECT sent_at IS NOT NULL AS sent FROM consumers.outbox;
SELECT partition, partitions, win_snap IS NULL AS no_open_window FROM chat_outbox.outbox_cursors WHERE service = 'consumers';
SELECT unsent FROM chat_outbox.status WHERE service = 'consumers';
SELECT cardinality(chat_outbox.relay_pass('consumers')) AS relayed_again;
-- a pass outside READ COMMITTED is refused: a tick takes a snapshot of its own
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT chat_outbox.relay_pass('consumers');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- the view's writes: an INSERT adds an unsent row; sent_at set to NULL adds a sent row again (a new
-- id, the same payload and so the same jobId); an INSERT as sent and any other UPDATE are refused
INSERT INTO consumers.outbox (event, payload) VALUES ('custom', '{"chat_id": 3, "id": "c-1"}') RETURNING event, chat_id, gen, sent_at;
INSERT INTO consumers.outbox (event, payload, sent_at) VALUES ('custom', '{}', now());
\echo :LAST_ERROR_SQLSTATE
UPDATE consumers.outbox SET payload = '{}' WHERE event = 'message.created';
\echo :LAST_ERROR_SQLSTATE
UPDATE consumers.outbox SET sent_at = NULL WHERE event = 'message.created';
SELECT count(*) AS copies, count(DISTINCT payload) AS payloads, count(*) FILTER (WHERE sent_at IS NULL) AS unsent
FROM consumers.outbox WHERE event = 'message.created';
SELECT cardinality(chat_outbox.relay_pass('consumers')) AS relayed;
-- the rotation: nothing to truncate in an empty generation, no switch before the retention
SELECT chat_outbox.outbox_rotate('consumers', 3600) AS waits;
SELECT current, empty, truncated FROM chat_outbox.outbox_rotation WHERE service = 'consumers';
-- once the current generation is older than the retention, a step opens the next (empty) one: the
-- windows read it from then on; the step after switches the writers to it
UPDATE chat_outbox.outbox_rotation SET started_at = now() - interval '2 hours' WHERE service = 'consumers';
SELECT chat_outbox.outbox_rotate('consumers', 3600) AS waits;
SELECT current, empty, opened FROM chat_outbox.outbox_rotation WHERE service = 'consumers';
SELECT body FROM consumers.send_message(6, 'still zero');
SELECT chat_outbox.outbox_rotate('consumers', 3600) AS waits;
SELECT current, empty, opened, closed_xmax[1] IS NULL AS not_closed_yet FROM chat_outbox.outbox_rotation WHERE service = 'consumers';
SELECT body FROM consumers.send_message(6, 'two');
SELECT payload->>'body' AS body, gen FROM consumers.outbox WHERE payload->>'body' IN ('still zero', 'two') ORDER BY id;
-- the generation that stopped taking rows gets its closed_xmax in the next step (which opens 2, aged
-- again); the step after switches to 2
UPDATE chat_outbox.outbox_rotation SET started_at = now() - interval '2 hours' WHERE service = 'consumers';
SELECT chat_outbox.outbox_rotate('consumers', 3600) AS waits;
SELECT current, empty, opened, closed_xmax[1] IS NOT NULL AS closed FROM chat_outbox.outbox_rotation WHERE service = 'consumers';
SELECT chat_outbox.outbox_rotate('consumers', 3600) AS waits;
SELECT current, empty, opened, closed_xmax[1] IS NOT NULL AS closed FROM chat_outbox.outbox_rotation WHERE service = 'consumers';
-- generation 0 is now the oldest: truncated once a pass's tick is past every transaction that wrote to
-- it (extension.retention holds it with a transaction left open)
SELECT cardinality(chat_outbox.relay_pass('consumers')) AS relayed;
SELECT chat_outbox.outbox_rotate('consumers', 3600) IS NULL AS truncated_now;
SELECT current, empty, truncated FROM chat_outbox.outbox_rotation WHERE service = 'consumers';
SELECT gen, count(*) FROM consumers.outbox GROUP BY gen ORDER BY gen;
-- the cursors are past every row of generation 1 too, but it is not the oldest: kept
SELECT count(*) AS unsent FROM consumers.outbox WHERE sent_at IS NULL;
DROP EXTENSION chat_outbox CASCADE;
