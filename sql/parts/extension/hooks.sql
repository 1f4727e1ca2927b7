-- CREATE OR REPLACE: the in-place switches between the modes run this same text over the other
-- mode's functions (sql/managed/generate.py).

CREATE OR REPLACE FUNCTION chat_outbox.services_changed() RETURNS trigger
	LANGUAGE c AS 'MODULE_PATHNAME', 'chat_outbox_services_changed';

-- The statement-level trigger on every outbox: notes the insert so the relay is woken when the
-- transaction commits (never before, never on rollback).
CREATE OR REPLACE FUNCTION chat_outbox.wake_relay() RETURNS trigger
	LANGUAGE c AS 'MODULE_PATHNAME', 'chat_outbox_wake_relay';

-- The body limit of send_message and publish_event in bytes, and where to raise it (their HINT):
-- the setting chat_outbox.max_body_bytes, which the library declares (so a caller cannot raise it
-- for itself with SET). Standard-SQL bodies: bound when created, and inlined into the callers.
CREATE OR REPLACE FUNCTION chat_outbox.max_body_bytes() RETURNS int
	LANGUAGE sql STABLE PARALLEL SAFE
RETURN coalesce(pg_catalog.current_setting('chat_outbox.max_body_bytes', true), '65536')::int;
CREATE OR REPLACE FUNCTION chat_outbox.max_body_bytes_setting() RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 'chat_outbox.max_body_bytes';
