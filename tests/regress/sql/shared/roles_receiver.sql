-- tests/regress/sql/shared/roles_receiver.sql - the API both installs share, part 4: the receiving
-- daemon's role and the other service's role (after roles_grants.sql). Included (\ir) by
-- tests/regress/sql/roles.sql (the extension) and tests/managed/api.sql (the managed install).
RESET search_path;
RESET ROLE;

-- the receiving daemon's role (receiver => true) stores received messages: only the receiver's
-- columns, seq and received_at always come from the database
SET ROLE consumers_daemon;
INSERT INTO consumers.inbox (message_id, chat_id, body, created_at)
	VALUES ('00000000-0000-4000-8000-000000000002', 1, 'received', now())
	ON CONFLICT (message_id) DO NOTHING RETURNING seq > 0 AS seq_from_database;
INSERT INTO consumers.inbox (message_id, chat_id, body, seq) OVERRIDING SYSTEM VALUE
	VALUES ('00000000-0000-4000-8000-000000000003', 1, 'forged', 1000000);
\echo :LAST_ERROR_SQLSTATE
UPDATE consumers.inbox SET seq = 5;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM consumers.inbox;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO workers.inbox (message_id, chat_id, body) VALUES ('00000000-0000-4000-8000-000000000004', 1, 'x');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

SET ROLE workers_app;
SELECT chat_id, body FROM workers.send_message(200, 'from workers_app');
SELECT count(*) FROM consumers.messages;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

SELECT (SELECT count(*) FROM consumers.messages WHERE chat_id = 100) AS consumers_sent,
	(SELECT count(*) FROM workers.messages WHERE chat_id = 200) AS workers_sent,
	(SELECT count(*) FROM workers.messages WHERE body = 'impostor') AS impostor;

