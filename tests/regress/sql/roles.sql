-- roles: grant_service() gives a role exactly its own schema.
CREATE EXTENSION chat_outbox;
\set SHOW_CONTEXT never
CREATE ROLE consumers_app LOGIN;
CREATE ROLE workers_app LOGIN;
SELECT chat_outbox.grant_service('consumers', 'consumers_app');
SELECT chat_outbox.grant_service('workers', 'workers_app');
SELECT chat_outbox.grant_service('nope', 'workers_app');
\echo :LAST_ERROR_SQLSTATE

SET ROLE consumers_app;
SET search_path = consumers;
SELECT chat_id, body FROM send_message(100, 'from consumers_app');
SELECT count(*) > 0 AS can_read_messages FROM consumers.messages;
SELECT count(*) > 0 AS can_read_outbox FROM consumers.outbox;
SELECT count(*) AS inbox FROM consumers.inbox;
-- every table of the other service, and its send_message: permission denied
SELECT count(*) FROM workers.messages;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM workers.outbox;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM workers.inbox;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM workers.send_message(1, 'impostor');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO workers.outbox (event, payload) VALUES ('message.created', '{}');
\echo :LAST_ERROR_SQLSTATE
-- nor may it drive the relay or read its Redis password
SELECT chat_outbox.relay_pass('consumers');
\echo :LAST_ERROR_SQLSTATE
SHOW chat_outbox.redis_url;
\echo :LAST_ERROR_SQLSTATE
RESET search_path;
RESET ROLE;

SET ROLE workers_app;
SELECT chat_id, body FROM workers.send_message(200, 'from workers_app');
SELECT count(*) FROM consumers.messages;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

SELECT (SELECT count(*) FROM consumers.messages WHERE chat_id = 100) AS consumers_sent,
	(SELECT count(*) FROM workers.messages WHERE chat_id = 200) AS workers_sent,
	(SELECT count(*) FROM workers.messages WHERE body = 'impostor') AS impostor;

-- each test creates what it uses and drops it, so any one of them runs alone
DROP EXTENSION chat_outbox CASCADE;
DROP ROLE consumers_app, workers_app;
