-- read_cursors: mark_read() stores a user's read cursor per chat; it always names a received
-- message of the chat and never moves backwards; only the receiver role may call it.
CREATE EXTENSION chat_outbox;
\set SHOW_CONTEXT never
CREATE ROLE rc_app LOGIN;
CREATE ROLE rc_daemon LOGIN;
SELECT chat_outbox.grant_service('workers', 'rc_app');
SELECT chat_outbox.grant_service('workers', 'rc_daemon', receiver => true);
INSERT INTO workers.inbox (message_id, chat_id, body)
	SELECT gen_random_uuid(), CASE WHEN g % 2 = 0 THEN 7 ELSE 8 END, 'm' || g FROM generate_series(1, 10) g;
SELECT chat_id, array_agg(seq ORDER BY seq) FROM workers.inbox GROUP BY chat_id ORDER BY chat_id;

SET ROLE rc_daemon;
-- nothing received at or below seq 1 in chat 7: no cursor
SELECT cursor_seq, cursor_message_id IS NULL AS no_message, moved FROM workers.mark_read(7, 'u1', 1);
-- seq 5 is chat 8's: the cursor is chat 7's highest at or below it (4)
SELECT cursor_seq, moved FROM workers.mark_read(7, 'u1', 5);
SELECT cursor_message_id = (SELECT message_id FROM workers.inbox WHERE seq = 4) AS names_row_4 FROM workers.mark_read(7, 'u1', 4);
-- forwards, then backwards (kept), then beyond the last row (the last row)
SELECT cursor_seq, moved FROM workers.mark_read(7, 'u1', 8);
SELECT cursor_seq, moved FROM workers.mark_read(7, 'u1', 2);
SELECT cursor_seq, moved FROM workers.mark_read(7, 'u1', 1000);
-- another user and another chat are their own cursors
SELECT cursor_seq, moved FROM workers.mark_read(7, 'u2', 2);
SELECT cursor_seq, moved FROM workers.mark_read(8, 'u1', 3);
SELECT chat_id, user_id, seq FROM workers.read_cursors ORDER BY chat_id, user_id;
-- bad arguments
SELECT * FROM workers.mark_read(7, '', 3);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM workers.mark_read(7, repeat('x', 201), 3);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM workers.mark_read(7, 'u1', NULL);
\echo :LAST_ERROR_SQLSTATE
-- no direct writes, even for the receiver
UPDATE workers.read_cursors SET seq = 0;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

SET ROLE rc_app;
-- an application's role reads cursors but cannot move them
SELECT count(*) AS cursors FROM workers.read_cursors;
SELECT * FROM workers.mark_read(7, 'u1', 10);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

DROP EXTENSION chat_outbox CASCADE;
REVOKE USAGE ON SCHEMA chat_outbox FROM rc_app, rc_daemon; -- grant_service's, outlives the extension
DROP ROLE rc_app, rc_daemon;
