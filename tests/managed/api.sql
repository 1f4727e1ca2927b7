-- tests/managed/api.sql - the managed install's API, run as the database owner (not a superuser).
-- What both installs share is tests/regress/sql/shared/*.sql, which the extension's regress test
-- api.sql runs too; this file adds what is the managed install's own. Every SQLSTATE here is the
-- one the extension gives (tests/regress/expected/api.out, roles.out).
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT rolsuper AS owner_is_superuser FROM pg_roles WHERE rolname = current_user;
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'chat_outbox';
-- no function in our schemas needs a library
SELECT count(*) AS c_functions FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
	JOIN pg_language l ON l.oid = p.prolang
WHERE n.nspname IN ('chat_outbox', 'consumers', 'workers') AND l.lanname NOT IN ('sql', 'plpgsql');
\ir ../regress/sql/shared/api_send.sql
\ir ../regress/sql/shared/api_edits.sql
\ir ../regress/sql/shared/api_client_msg_id.sql
-- inbox_apply's calls are counted: install.sh sets track_functions = 'pl' for the database
\ir ../regress/sql/shared/api_waiting.sql
SELECT * FROM consumers.send_message(1, repeat('x', 65537));
\echo :LAST_ERROR_SQLSTATE
-- the limit is the settings row's, in bytes; a caller's SET changes nothing
UPDATE chat_outbox.settings SET max_body_bytes = 8;
SET chat_outbox.max_body_bytes = 1000;
SELECT body FROM consumers.send_message(1, 'éééé');
SELECT * FROM consumers.send_message(1, 'ééééé');
\echo :LAST_ERROR_SQLSTATE
RESET chat_outbox.max_body_bytes;
UPDATE chat_outbox.settings SET max_body_bytes = DEFAULT;
-- how a send wakes the relays: notify or wal, nothing else
UPDATE chat_outbox.settings SET wake = 'smoke signals';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) - :before AS written_by_bad_input FROM consumers.messages WHERE body <> 'éééé';
-- with wal, a send writes a logical decoding message, which works at any wal_level (this one's is replica)
SHOW wal_level;
UPDATE chat_outbox.settings SET wake = 'wal';
SELECT body FROM consumers.send_message(3, 'woken through the WAL');
UPDATE chat_outbox.settings SET wake = DEFAULT;
SELECT publish_event FROM consumers.publish_event('', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT publish_event FROM consumers.publish_event('x', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT publish_event FROM consumers.publish_event('x', '[1, 2]');
\echo :LAST_ERROR_SQLSTATE
SELECT event, payload ? 'id' AS has_id FROM consumers.publish_event('order.paid', '{"n": 1}');

\ir ../regress/sql/shared/api_services.sql
\set VERBOSITY terse

-- the status view: backlog per service; no relay has reported yet
SELECT service, queue, unsent, relay_state, worker_pid FROM chat_outbox.status ORDER BY service;

\ir ../regress/sql/shared/roles_grants.sql
-- nor may it change the settings (only the owner may)
UPDATE chat_outbox.settings SET max_body_bytes = 1000000;
\echo :LAST_ERROR_SQLSTATE
\ir ../regress/sql/shared/roles_receiver.sql
\ir ../regress/sql/shared/roles_members.sql
