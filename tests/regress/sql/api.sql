-- api: schema, send_message(), its errors, rollback, create_service(), settings.
CREATE EXTENSION chat_outbox;
\set SHOW_CONTEXT never

\ir sql/shared/api_send.sql
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

\ir sql/shared/api_edits.sql
\ir sql/shared/api_client_msg_id.sql

-- inbox_apply's calls counted, for the changes waiting for their message
SET track_functions = 'pl';
\ir sql/shared/api_waiting.sql
RESET track_functions;

\ir sql/shared/api_services.sql

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
