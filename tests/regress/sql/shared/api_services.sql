-- tests/regress/sql/shared/api_services.sql - the API both installs share, part 2: rollback,
-- savepoints, create_service() and its checks, the status view's backlog. Included (\ir) by
-- tests/regress/sql/api.sql (the extension) and tests/managed/api.sql (the managed install).
-- rollback leaves neither message nor outbox row
SELECT count(*) AS m0 FROM consumers.messages \gset
SELECT count(*) AS o0 FROM consumers.outbox \gset
BEGIN;
SELECT body FROM consumers.send_message(5, 'rolled back');
SELECT body FROM consumers.send_message(5, 'rolled back too');
ROLLBACK;
SELECT (SELECT count(*) FROM consumers.messages) - :m0 AS messages_added,
	(SELECT count(*) FROM consumers.outbox) - :o0 AS outbox_added;

-- a message and its event commit together, also inside a larger transaction
BEGIN;
SELECT body FROM consumers.send_message(6, 'one');
SAVEPOINT s;
SELECT body FROM consumers.send_message(6, 'undone');
ROLLBACK TO s;
COMMIT;
SELECT body FROM consumers.messages WHERE chat_id = 6;
SELECT payload ->> 'body' AS body FROM consumers.outbox WHERE payload ->> 'chat_id' = '6';

-- a further service is one call away
SELECT chat_outbox.create_service('billing', queue => 'billing-messages');
SELECT chat_outbox.create_service('audit');
SELECT name, queue FROM chat_outbox.services ORDER BY name;
SELECT chat_id, body FROM billing.send_message(9, 'invoice');
SELECT count(*) FROM billing.outbox WHERE sent_at IS NULL;
SELECT chat_outbox.create_service('Bad-Name');
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.create_service('bad_queue', queue => 'a:b');
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.create_service('billing');
\echo :LAST_ERROR_SQLSTATE
-- a queue name the relay would truncate (over 255 bytes) is refused, by create_service and by an UPDATE
SELECT chat_outbox.create_service('too_long_queue', queue => repeat('q', 256));
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.create_service('too_long_bytes', queue => repeat('é', 128));
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT chat_outbox.create_service('long_queue', queue => repeat('q', 255));
SELECT octet_length(queue) FROM chat_outbox.services WHERE name = 'long_queue';
\set VERBOSITY terse
UPDATE chat_outbox.services SET queue = repeat('q', 256) WHERE name = 'long_queue';
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT count(*) FROM pg_namespace WHERE nspname IN ('too_long_queue', 'too_long_bytes');

-- the status view lists every outbox with its backlog
SELECT service, queue, unsent, oldest_unsent_age IS NOT NULL AS has_backlog_age
FROM chat_outbox.status ORDER BY service;

