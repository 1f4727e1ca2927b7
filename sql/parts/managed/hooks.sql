-- CREATE OR REPLACE: the in-place switches between the modes run this same text over the other
-- mode's functions (sql/managed/generate.py).

CREATE OR REPLACE FUNCTION chat_outbox.services_changed() RETURNS trigger
	LANGUAGE plpgsql
AS $changed$
BEGIN
	PERFORM pg_catalog.pg_notify('chat_outbox_relay', '');
	RETURN NULL;
END
$changed$;

-- The statement-level trigger on every outbox: notes the insert so the relay is woken when the
-- transaction commits (never before, never on rollback): a NOTIFY the relay LISTENs for, or a
-- logical decoding message its replication stream reads (chat_outbox.settings.wake).
CREATE OR REPLACE FUNCTION chat_outbox.wake_relay() RETURNS trigger
	LANGUAGE plpgsql
AS $wake$
BEGIN
	-- Both are delivered when the transaction commits, never on rollback. A notification takes a
	-- database-wide lock at COMMIT (commits that notify are serialized); a logical decoding
	-- message is one WAL record, read by the relays' logical replication streams (--wake logical).
	IF (SELECT s.wake FROM chat_outbox.settings s) = 'wal' THEN
		PERFORM pg_catalog.pg_logical_emit_message(true, 'chat_outbox_relay', '');
	ELSE
		PERFORM pg_catalog.pg_notify('chat_outbox_relay', '');
	END IF;
	RETURN NULL;
END
$wake$;

-- The body limit of send_message and publish_event in bytes, and where to raise it (their HINT):
-- chat_outbox.settings, which only the owner may change (without the library, a setting could be
-- raised by any caller with SET). Standard-SQL bodies, bound when created.
CREATE OR REPLACE FUNCTION chat_outbox.max_body_bytes() RETURNS int
	LANGUAGE sql STABLE PARALLEL SAFE
RETURN coalesce((SELECT s.max_body_bytes FROM chat_outbox.settings s), 65536);
CREATE OR REPLACE FUNCTION chat_outbox.max_body_bytes_setting() RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 'max_body_bytes in chat_outbox.settings';
