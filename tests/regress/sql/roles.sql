-- roles: grant_service() gives a role exactly its own schema.
CREATE EXTENSION chat_outbox;
\set SHOW_CONTEXT never
CREATE ROLE consumers_app LOGIN;
CREATE ROLE workers_app LOGIN;
CREATE ROLE consumers_daemon LOGIN;
\ir sql/shared/roles_grants.sql
-- nor may it drive the relay or read its Redis password
SELECT chat_outbox.relay_pass('consumers');
\echo :LAST_ERROR_SQLSTATE
SHOW chat_outbox.redis_url;
\echo :LAST_ERROR_SQLSTATE
\ir sql/shared/roles_receiver.sql
\ir sql/shared/roles_members.sql

-- each test creates what it uses and drops it, so any one of them runs alone (schema chat_outbox
-- outlives the extension, and grant_service's USAGE on it with it)
REVOKE USAGE ON SCHEMA chat_outbox FROM consumers_app, workers_app, consumers_daemon;
DROP EXTENSION chat_outbox CASCADE;
DROP ROLE consumers_app, workers_app, consumers_daemon;
