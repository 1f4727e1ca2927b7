-- tests/regress/sql/shared/api_send.sql - the API both installs share, part 1: the seed's services,
-- the contract's tables, send_message() and the errors of its arguments. Included (\ir) by
-- tests/regress/sql/api.sql (the extension) and tests/managed/api.sql (the managed install).
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
