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

-- the outbox's generations with their id and xid indexes (no index on a sent flag: rows are written
-- once), the wake-up trigger on the generations, the view's write trigger
SELECT indexdef FROM pg_indexes WHERE schemaname = 'consumers' ORDER BY indexname;
SELECT tgrelid::regclass, tgname, tgtype FROM pg_trigger
WHERE tgrelid IN ('consumers.outbox'::regclass, 'consumers.outbox_events'::regclass) ORDER BY 2;

-- send_message returns the stored row; without a sender its sender is NULL
SELECT chat_id, body, id IS NOT NULL AS has_id, created_at IS NOT NULL AS has_created_at, sender
FROM consumers.send_message(42, 'hi');

-- ... and wrote one outbox row whose payload is the message, chat_id a JSON number
SELECT o.event,
	jsonb_typeof(o.payload -> 'chat_id') AS chat_id_type,
	o.payload = jsonb_build_object('id', m.id, 'chat_id', m.chat_id, 'body', m.body, 'created_at', m.created_at,
		'sender', m.sender) AS payload_is_message,
	jsonb_typeof(o.payload -> 'sender') AS sender_type,
	o.sent_at IS NULL AS unsent
FROM consumers.outbox o JOIN consumers.messages m ON m.id = (o.payload ->> 'id')::uuid;

-- with a sender (the gateway passes the token's sub): on the row and in the payload, by position or
-- by name; one send_message, so a two-argument call is not ambiguous
SELECT chat_id, body, sender FROM consumers.send_message(42, 'from alice', 'alice');
SELECT sender FROM consumers.send_message(42, 'from bob', sender => 'bob');
-- 200 bytes (100 two-byte characters) is the most a sender may have
SELECT octet_length(sender) FROM consumers.send_message(1, 'at the limit', repeat('é', 100));
SELECT o.payload ->> 'sender' AS payload_sender, m.sender FROM consumers.outbox o
	JOIN consumers.messages m ON m.id = (o.payload ->> 'id')::uuid
WHERE m.body LIKE 'from %' ORDER BY o.id;
SELECT n.nspname, p.proname, pg_get_function_identity_arguments(p.oid) AS args
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname IN ('consumers', 'workers') AND p.proname = 'send_message' ORDER BY 1;

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
-- hostile senders: empty, 10 KB, control characters (the rule of mark_read's user_id)
SELECT * FROM consumers.send_message(1, 'x', '');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.send_message(1, 'x', repeat('a', 10240));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.send_message(1, 'x', repeat('a', 201));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.send_message(1, 'x', 'ali' || chr(10) || 'ce');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.send_message(1, 'x', E'\u001b[31mred');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.send_message(1, 'x', 'del' || chr(127));
\echo :LAST_ERROR_SQLSTATE
