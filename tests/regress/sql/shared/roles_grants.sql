-- tests/regress/sql/shared/roles_grants.sql - the API both installs share, part 3: grant_service()
-- gives an application's role exactly its own schema (ends as consumers_app, search_path consumers).
-- Needs the roles consumers_app, workers_app and consumers_daemon. Included (\ir) by
-- tests/regress/sql/roles.sql (the extension) and tests/managed/api.sql (the managed install).
SELECT chat_outbox.grant_service('consumers', 'consumers_app');
SELECT chat_outbox.grant_service('workers', 'workers_app');
SELECT chat_outbox.grant_service('consumers', 'consumers_daemon', receiver => true);
SELECT chat_outbox.grant_service('nope', 'workers_app');
\echo :LAST_ERROR_SQLSTATE

SET ROLE consumers_app;
SET search_path = consumers;
SELECT chat_id, body FROM send_message(100, 'from consumers_app');
SELECT count(*) > 0 AS can_read_messages FROM consumers.messages;
SELECT count(*) > 0 AS can_read_outbox FROM consumers.outbox;
SELECT count(*) AS inbox FROM consumers.inbox;
-- no direct writes: the outbox only through send_message/publish_event, and an application's role
-- does not write the inbox either
INSERT INTO consumers.outbox (event, payload) VALUES ('message.created', '{"id": "wait"}');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO consumers.messages (chat_id, body) VALUES (1, 'bypass');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO consumers.inbox (message_id, chat_id, body, seq) OVERRIDING SYSTEM VALUE
	VALUES ('00000000-0000-4000-8000-000000000001', 1, 'forged', 1000000);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO consumers.inbox (message_id, chat_id, body, created_at)
	VALUES ('00000000-0000-4000-8000-000000000002', 1, 'received', now());
\echo :LAST_ERROR_SQLSTATE
UPDATE consumers.inbox SET seq = 5;
\echo :LAST_ERROR_SQLSTATE
UPDATE consumers.outbox SET sent_at = NULL;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM consumers.inbox;
\echo :LAST_ERROR_SQLSTATE
SELECT nextval('consumers.inbox_seq_seq');
\echo :LAST_ERROR_SQLSTATE
-- publish_event: the checked way to write an event of one's own. It runs as its owner under the
-- caller's search_path, so its body qualifies every name: a caller's own type "text" (pg_temp is
-- searched first for types) changes nothing
CREATE TYPE pg_temp.text AS (x int);
SELECT event, payload ->> 'n' AS n FROM publish_event('shadow.check', '{"n": 0}');
DROP TYPE pg_temp.text;
SELECT event, payload ->> 'n' AS n, payload ? 'id' AS has_id, sent_at FROM publish_event('order.paid', '{"n": 1}');
SELECT event, payload ->> 'id' AS id FROM publish_event('order.paid', '{"id": "own-id-1", "n": 2}');
SELECT publish_event('', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT publish_event('x', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT publish_event('x', '[1, 2]');
\echo :LAST_ERROR_SQLSTATE
SELECT publish_event('x', jsonb_build_object('blob', repeat('b', 70000)));
\echo :LAST_ERROR_SQLSTATE
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
SELECT workers.publish_event('x', '{}');
\echo :LAST_ERROR_SQLSTATE
