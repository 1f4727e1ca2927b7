-- api: schema, send_message(), its errors, rollback, create_service(), settings.
CREATE EXTENSION chat_outbox;
\set SHOW_CONTEXT never

-- the seed's two services
SELECT name, queue FROM chat_outbox.services ORDER BY name;

-- every table of both services, with the contract's columns
SELECT table_schema, table_name, string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position) AS columns
FROM information_schema.columns
WHERE table_schema IN ('consumers', 'workers')
GROUP BY 1, 2 ORDER BY 1, 2;

-- the partial index on unsent rows, the wake-up trigger
SELECT indexdef FROM pg_indexes WHERE schemaname = 'consumers' ORDER BY indexname;
SELECT tgname, tgtype FROM pg_trigger WHERE tgrelid = 'consumers.outbox'::regclass;

-- send_message returns the stored row
SELECT chat_id, body, id IS NOT NULL AS has_id, created_at IS NOT NULL AS has_created_at
FROM consumers.send_message(42, 'hi');

-- ... and wrote one outbox row whose payload is the message, chat_id a JSON number
SELECT o.event,
	jsonb_typeof(o.payload -> 'chat_id') AS chat_id_type,
	o.payload = jsonb_build_object('id', m.id, 'chat_id', m.chat_id, 'body', m.body, 'created_at', m.created_at) AS payload_is_message,
	o.sent_at IS NULL AS unsent
FROM consumers.outbox o JOIN consumers.messages m ON m.id = (o.payload ->> 'id')::uuid;

-- plain call with the service schema on the search_path
SET search_path = workers;
SELECT chat_id, body FROM send_message(7, 'reply');
RESET search_path;
SELECT count(*) AS workers_outbox FROM workers.outbox;

-- bad input: clear errors with SQLSTATE, and nothing written
SELECT count(*) AS before FROM consumers.messages \gset
SELECT * FROM consumers.send_message(NULL, 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.send_message(1, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.send_message(1, '');
\echo :LAST_ERROR_SQLSTATE
SET chat_outbox.max_body_bytes = 8;
SELECT * FROM consumers.send_message(1, '123456789');
\echo :LAST_ERROR_SQLSTATE
-- bytes, not characters: 4 x 2-byte characters fit, 5 do not
SELECT body FROM consumers.send_message(1, 'éééé');
SELECT * FROM consumers.send_message(1, 'ééééé');
\echo :LAST_ERROR_SQLSTATE
RESET chat_outbox.max_body_bytes;
SHOW chat_outbox.max_body_bytes;
SELECT count(*) - :before AS written_by_bad_input FROM consumers.messages WHERE body <> 'éééé';

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

-- relay_pass needs an existing service
SELECT chat_outbox.relay_pass('nope');
\echo :LAST_ERROR_SQLSTATE

-- every setting, with its default
SELECT name, setting, unit, context FROM pg_settings WHERE name LIKE 'chat_outbox.%' AND name NOT IN ('chat_outbox.database', 'chat_outbox.redis_url', 'chat_outbox.relay_enabled') ORDER BY name;
SELECT context FROM pg_settings WHERE name = 'chat_outbox.redis_url';
-- a prefix BullMQ cannot split its keys by is refused (nothing is written to postgresql.auto.conf)
ALTER SYSTEM SET chat_outbox.bullmq_prefix = 'a:b';
ALTER SYSTEM SET chat_outbox.bullmq_prefix = '';

-- each test creates what it uses and drops it, so any one of them runs alone
SET client_min_messages = warning;
DROP EXTENSION chat_outbox CASCADE;
DROP SCHEMA billing, audit CASCADE;
RESET client_min_messages;
