-- sql/released/chat_outbox--1.0.sql - chat_outbox 1.0: services, send_message(), the relay's SQL surface.
-- Version 1.0 as released (its SQL never edited): the extension's base. Installed with the updates after it
-- (sql/released/update_<version>.sql, built per mode by sql/managed/generate.py), it gives every
-- older version (CREATE EXTENSION chat_outbox VERSION '1.3': Postgres chains the updates itself).

\echo Use "CREATE EXTENSION chat_outbox" to load this file. \quit

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

-- Contract: docs/architecture.md. Everything is schema-qualified so that no caller's
-- search_path can change what these functions do.

-- One row per service; the relay worker rereads it about once a second, so
-- UPDATE chat_outbox.services SET queue = ... applies without a restart.
CREATE TABLE chat_outbox.services (
	name text PRIMARY KEY CHECK (name OPERATOR(pg_catalog.~) '^[a-z_][a-z0-9_]{0,47}$'),
	-- a BullMQ queue name (the rule of common/bullmq/queue_keys.hpp, IsValidName: non-empty, no ':'),
	-- at most 255 bytes: the relay keeps the name in a 256-byte buffer and would truncate a longer one
	queue text NOT NULL UNIQUE CHECK (queue OPERATOR(pg_catalog.<>) '' AND pg_catalog.strpos(queue, ':') OPERATOR(pg_catalog.=) 0
		AND pg_catalog.octet_length(queue) OPERATOR(pg_catalog.<=) 255),
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	-- the number of partitions the relay spreads the service's chats over (common/partitions.hpp:
	-- 1 keeps the queue <queue>, more make queues <queue>-p0 ...); changed with set_partitions()
	partitions int NOT NULL DEFAULT 1 CHECK (partitions BETWEEN 1 AND 256)
);
COMMENT ON TABLE chat_outbox.services IS 'Services whose outbox the chat_outbox relay moves to BullMQ queue <queue>.';

CREATE TRIGGER services_changed AFTER INSERT OR UPDATE OR DELETE ON chat_outbox.services
	FOR EACH STATEMENT EXECUTE FUNCTION chat_outbox.services_changed();

-- The range of a service's partition count, with the error create_service() and set_partitions() give.
CREATE FUNCTION chat_outbox.check_partitions(partitions int) RETURNS void
	LANGUAGE plpgsql IMMUTABLE
	SET search_path = pg_catalog, pg_temp
AS $check$
BEGIN
	IF partitions IS NULL OR partitions NOT BETWEEN 1 AND 256 THEN
		RAISE EXCEPTION 'invalid partition count: %', coalesce(partitions::text, 'NULL')
			USING ERRCODE = '22023',
				DETAIL = 'A service has 1 to 256 partitions.',
				HINT = 'Pass a number from 1 to 256.';
	END IF;
END
$check$;

CREATE FUNCTION chat_outbox.create_service(name text, queue text DEFAULT NULL, partitions int DEFAULT 1) RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $create$
DECLARE
	q text := coalesce(queue, name || '-messages');
BEGIN
	IF name IS NULL OR name !~ '^[a-z_][a-z0-9_]{0,47}$' OR name = 'chat_outbox' OR name LIKE 'pg\_%' THEN
		RAISE EXCEPTION 'invalid service name: %', coalesce(quote_literal(name), 'NULL')
			USING ERRCODE = '22023',
				DETAIL = 'A service name becomes a schema name.',
				HINT = 'Use lower-case letters, digits and underscores, starting with a letter, at most 48 characters.';
	END IF;
	IF EXISTS (SELECT FROM chat_outbox.services s WHERE s.name = create_service.name) THEN
		RAISE EXCEPTION 'service "%" already exists', name
			USING ERRCODE = '42710', HINT = 'Services are listed in chat_outbox.services.';
	END IF;
	IF (SELECT count(*) FROM chat_outbox.services) >= 32 THEN
		RAISE EXCEPTION 'too many services'
			USING ERRCODE = '54000', DETAIL = 'The relay serves at most 32 services.';
	END IF;
	IF q = '' OR strpos(q, ':') > 0 THEN
		RAISE EXCEPTION 'invalid queue name: %', quote_literal(q)
			USING ERRCODE = '22023',
				DETAIL = 'BullMQ splits Redis keys on '':''.',
				HINT = 'Use a non-empty queue name without '':''.';
	END IF;
	IF octet_length(q) > 255 THEN
		RAISE EXCEPTION 'queue name is too long'
			USING ERRCODE = '22023',
				DETAIL = format('The queue name is %s bytes; the limit is 255 bytes.', octet_length(q)),
				HINT = 'Use a shorter queue name.';
	END IF;
	PERFORM chat_outbox.check_partitions(partitions);

	EXECUTE format($ddl$
		CREATE SCHEMA %1$I;

		CREATE TABLE %1$I.messages (
			id uuid PRIMARY KEY DEFAULT pg_catalog.gen_random_uuid(),
			chat_id bigint NOT NULL,
			body text NOT NULL,
			created_at timestamptz NOT NULL DEFAULT pg_catalog.now()
		);

		CREATE TABLE %1$I.outbox (
			id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			event text NOT NULL,
			payload jsonb NOT NULL,
			created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
			sent_at timestamptz,
			refused text -- why Redis could not take this row as a job; the relay skips it while set
		);
		CREATE INDEX outbox_unsent ON %1$I.outbox (id) WHERE sent_at IS NULL;
		CREATE TRIGGER wake_relay AFTER INSERT ON %1$I.outbox
			FOR EACH STATEMENT EXECUTE FUNCTION chat_outbox.wake_relay();

		CREATE TABLE %1$I.inbox (
			message_id uuid PRIMARY KEY,
			chat_id bigint NOT NULL,
			body text NOT NULL,
			created_at timestamptz,
			received_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
			seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE
		);
		CREATE INDEX inbox_chat_seq ON %1$I.inbox (chat_id, seq);
		-- history pages a chat's sent messages newest first by (created_at, id)
		CREATE INDEX messages_chat_created ON %1$I.messages (chat_id, created_at, id);

		-- How far each user of this service has read each chat: the seq of an inbox row of the chat.
		-- Written only by mark_read(), which never moves it backwards.
		CREATE TABLE %1$I.read_cursors (
			chat_id bigint NOT NULL,
			user_id text NOT NULL CHECK (user_id OPERATOR(pg_catalog.<>) '' AND pg_catalog.octet_length(user_id) OPERATOR(pg_catalog.<=) 200),
			seq bigint NOT NULL,
			message_id uuid NOT NULL,
			updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
			PRIMARY KEY (chat_id, user_id)
		);
	$ddl$, name);

	-- send_message and publish_event are the only way roles write the outbox (grant_service gives
	-- no INSERT on it): SECURITY DEFINER, so every outbox row went through their checks.
	-- No SET clause: it would stop plan caching and cost every call a GUC save/restore. Without it
	-- the caller's search_path is in force, so every name in the bodies is schema-qualified, down
	-- to the operators and the types of casts (only keyword types such as int are not: the grammar
	-- maps them to pg_catalog). An unqualified name would let a caller's own object run as the owner.
	EXECUTE format($fn$
		CREATE FUNCTION %1$I.send_message(chat_id bigint, body text) RETURNS %1$I.messages
			LANGUAGE plpgsql SECURITY DEFINER
		AS $body$
		#variable_conflict use_variable
		DECLARE
			m %1$I.messages;
			max_bytes int := chat_outbox.max_body_bytes();
		BEGIN
			IF chat_id IS NULL THEN
				RAISE EXCEPTION 'chat_id must not be null'
					USING ERRCODE = '22004', DETAIL = 'Every message belongs to a chat.',
						HINT = 'Pass the chat''s id as the first argument of send_message().';
			END IF;
			IF body IS NULL THEN
				RAISE EXCEPTION 'body must not be null'
					USING ERRCODE = '22004', DETAIL = 'A message needs a body.',
						HINT = 'Pass the message text as the second argument of send_message().';
			END IF;
			IF body OPERATOR(pg_catalog.=) '' THEN
				RAISE EXCEPTION 'body must not be empty'
					USING ERRCODE = '22023', DETAIL = 'Empty messages are not stored or relayed.',
						HINT = 'Send at least one character.';
			END IF;
			IF pg_catalog.octet_length(body) OPERATOR(pg_catalog.>) max_bytes THEN
				RAISE EXCEPTION 'body is too long'
					USING ERRCODE = '22001',
						DETAIL = pg_catalog.format('The body is %%s bytes; the limit is %%s bytes.', pg_catalog.octet_length(body), max_bytes),
						HINT = 'Shorten the message, or raise ' OPERATOR(pg_catalog.||) chat_outbox.max_body_bytes_setting() OPERATOR(pg_catalog.||) '.';
			END IF;
			INSERT INTO %1$I.messages (chat_id, body) VALUES (chat_id, body) RETURNING * INTO m;
			INSERT INTO %1$I.outbox (event, payload) VALUES ('message.created',
				pg_catalog.jsonb_build_object('id', m.id, 'chat_id', m.chat_id, 'body', m.body, 'created_at', m.created_at));
			RETURN m;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.send_message(bigint, text) FROM PUBLIC;

		CREATE FUNCTION %1$I.publish_event(event text, payload jsonb) RETURNS %1$I.outbox
			LANGUAGE plpgsql SECURITY DEFINER
		AS $body$
		#variable_conflict use_variable
		DECLARE
			o %1$I.outbox;
			max_bytes int := chat_outbox.max_body_bytes();
		BEGIN
			IF event IS NULL OR event OPERATOR(pg_catalog.=) '' THEN
				RAISE EXCEPTION 'event must not be empty'
					USING ERRCODE = '22023', DETAIL = 'The event becomes the BullMQ job name.',
						HINT = 'Pass a name such as ''order.paid'' as the first argument of publish_event().';
			END IF;
			IF payload IS NULL THEN
				RAISE EXCEPTION 'payload must not be null'
					USING ERRCODE = '22004', DETAIL = 'The payload becomes the BullMQ job data.',
						HINT = 'Pass a JSON object as the second argument of publish_event().';
			END IF;
			IF pg_catalog.jsonb_typeof(payload) OPERATOR(pg_catalog.<>) 'object' THEN
				RAISE EXCEPTION 'payload must be a JSON object'
					USING ERRCODE = '22023', DETAIL = pg_catalog.format('The payload is a JSON %%s.', pg_catalog.jsonb_typeof(payload)),
						HINT = 'Wrap the value in an object, e.g. {"value": ...}.';
			END IF;
			IF pg_catalog.octet_length(payload::pg_catalog.text) OPERATOR(pg_catalog.>) max_bytes THEN
				RAISE EXCEPTION 'payload is too long'
					USING ERRCODE = '22001',
						DETAIL = pg_catalog.format('The payload is %%s bytes; the limit is %%s bytes.', pg_catalog.octet_length(payload::pg_catalog.text), max_bytes),
						HINT = 'Shorten the payload, or raise ' OPERATOR(pg_catalog.||) chat_outbox.max_body_bytes_setting() OPERATOR(pg_catalog.||) '.';
			END IF;
			IF NOT payload OPERATOR(pg_catalog.?) 'id' THEN
				payload := payload OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('id', pg_catalog.gen_random_uuid());
			END IF;
			INSERT INTO %1$I.outbox (event, payload) VALUES (event, payload) RETURNING * INTO o;
			RETURN o;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.publish_event(text, jsonb) FROM PUBLIC;

		-- mark_read: user_id has read chat_id up to inbox seq `seq`. The cursor becomes the highest
		-- inbox row of the chat at or below it (so it always names a received message), and only if
		-- that is above the stored one: a cursor never moves backwards. Returns the cursor now stored
		-- (NULLs when there is none) and whether this call moved it.
		CREATE FUNCTION %1$I.mark_read(chat_id bigint, user_id text, seq bigint,
			OUT cursor_seq bigint, OUT cursor_message_id uuid, OUT cursor_created_at timestamptz, OUT moved boolean)
			LANGUAGE plpgsql SECURITY DEFINER
		AS $body$
		#variable_conflict use_variable
		DECLARE
			s bigint;
			m uuid;
		BEGIN
			IF chat_id IS NULL OR user_id IS NULL OR seq IS NULL THEN
				RAISE EXCEPTION 'chat_id, user_id and seq must not be null'
					USING ERRCODE = '22004', HINT = 'Call mark_read(chat_id, user_id, seq).';
			END IF;
			IF user_id OPERATOR(pg_catalog.=) '' OR pg_catalog.octet_length(user_id) OPERATOR(pg_catalog.>) 200 THEN
				RAISE EXCEPTION 'user_id must be 1 to 200 bytes'
					USING ERRCODE = '22023', DETAIL = 'The user is the token''s sub.';
			END IF;
			SELECT i.seq, i.message_id INTO s, m FROM %1$I.inbox i
				WHERE i.chat_id OPERATOR(pg_catalog.=) chat_id AND i.seq OPERATOR(pg_catalog.<=) seq
				ORDER BY i.seq DESC LIMIT 1;
			moved := false;
			IF s IS NOT NULL THEN
				INSERT INTO %1$I.read_cursors AS r (chat_id, user_id, seq, message_id) VALUES (chat_id, user_id, s, m)
					ON CONFLICT ON CONSTRAINT read_cursors_pkey DO UPDATE
						SET seq = EXCLUDED.seq, message_id = EXCLUDED.message_id, updated_at = pg_catalog.now()
						WHERE r.seq OPERATOR(pg_catalog.<) EXCLUDED.seq
					RETURNING true INTO moved;
				moved := coalesce(moved, false);
			END IF;
			SELECT r.seq, r.message_id, i.created_at INTO cursor_seq, cursor_message_id, cursor_created_at
				FROM %1$I.read_cursors r LEFT JOIN %1$I.inbox i ON i.message_id OPERATOR(pg_catalog.=) r.message_id
				WHERE r.chat_id OPERATOR(pg_catalog.=) chat_id AND r.user_id OPERATOR(pg_catalog.=) user_id;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.mark_read(bigint, text, bigint) FROM PUBLIC;
	$fn$, name);

	INSERT INTO chat_outbox.services (name, queue, partitions) VALUES (create_service.name, q, create_service.partitions);
END
$create$;
COMMENT ON FUNCTION chat_outbox.create_service(text, text, int) IS
	'Creates schema <name> with messages, outbox, inbox and send_message(), relayed to BullMQ queue <queue> (default <name>-messages), or with partitions > 1 to queues <queue>-p0 ... <queue>-p<partitions-1>.';

-- A live change of the partition count: the relay stops relaying the service until every queue of
-- the old layout is empty, then SETs the new count in Redis and relays under it (per-chat order
-- holds across the change; docs/architecture.md, 'Changing the number of partitions').
CREATE FUNCTION chat_outbox.set_partitions(service text, partitions int) RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $set$
BEGIN
	PERFORM chat_outbox.check_partitions(partitions);
	UPDATE chat_outbox.services s SET partitions = set_partitions.partitions WHERE s.name = service;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'service "%" does not exist', service
			USING ERRCODE = '42704', HINT = 'Services are listed in chat_outbox.services.';
	END IF;
END
$set$;
COMMENT ON FUNCTION chat_outbox.set_partitions(text, int) IS
	'Changes a service''s partition count; the relay switches once the old layout''s queues are empty (chat_outbox.status shows the wait).';

-- The partition of an outbox row, for the status views and for SQL users: the rule of
-- common/partitions.hpp (RowPartition of ChatIdOfJson), which places the rows: chat_id mod n taken
-- non-negative, partition 0 for a payload without an integer chat_id that fits a bigint.
-- A standard-SQL body: its names are bound when it is created, so it needs no SET clause (and stays inlinable).
CREATE FUNCTION chat_outbox.chat_partition(payload jsonb, partitions int) RETURNS int
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN jsonb_typeof(payload -> 'chat_id') = 'number' AND (payload ->> 'chat_id') ~ '^-?[0-9]{1,19}$'
		AND (payload ->> 'chat_id')::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
	THEN ((((payload ->> 'chat_id')::bigint % partitions) + partitions) % partitions)::int ELSE 0 END;

CREATE FUNCTION chat_outbox.grant_service(service text, role name, receiver boolean DEFAULT false) RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $grant$
BEGIN
	IF NOT EXISTS (SELECT FROM chat_outbox.services s WHERE s.name = service) THEN
		RAISE EXCEPTION 'service "%" does not exist', service
			USING ERRCODE = '42704', HINT = 'Create it with chat_outbox.create_service().';
	END IF;
	EXECUTE format('GRANT USAGE ON SCHEMA %1$I TO %2$I', service, role);
	EXECUTE format('GRANT SELECT ON %1$I.messages, %1$I.outbox, %1$I.inbox, %1$I.read_cursors TO %2$I', service, role);
	EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.send_message(bigint, text), %1$I.publish_event(text, jsonb) TO %2$I',
		service, role);
	-- The role the receiving daemon runs as stores what it receives: it may add inbox rows, but
	-- only these columns. seq and received_at always come from their defaults (no OVERRIDING
	-- SYSTEM VALUE: clients resume from seq), and no row is ever updated or deleted. An
	-- application's role gets no write on any table at all.
	IF receiver THEN
		EXECUTE format('GRANT INSERT (message_id, chat_id, body, created_at) ON %1$I.inbox TO %2$I', service, role);
		-- and it stores its clients' read cursors, only through mark_read's checks
		EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.mark_read(bigint, text, bigint) TO %2$I', service, role);
	END IF;
END
$grant$;
COMMENT ON FUNCTION chat_outbox.grant_service(text, name, boolean) IS
	'Gives a role exactly its service''s schema: read its tables, send through send_message/publish_event; with receiver => true also store received messages in the inbox (the receiving daemon''s role); nothing of other services.';

-- One relay pass from SQL (the worker's code path), for tests and manual draining.
CREATE FUNCTION chat_outbox.relay_pass(service text) RETURNS bigint[]
	LANGUAGE c STRICT AS 'MODULE_PATHNAME', 'chat_outbox_relay_pass';
REVOKE ALL ON FUNCTION chat_outbox.relay_pass(text) FROM PUBLIC;

-- CREATE OR REPLACE: the in-place switches between the modes run this same text over the other
-- mode's functions (sql/managed/generate.py).

CREATE OR REPLACE FUNCTION chat_outbox.relay_worker_status(
	OUT state text, OUT pid int, OUT last_error text, OUT last_error_at timestamptz, OUT redis_warning text,
	OUT redis_appendfsync text)
	LANGUAGE c AS 'MODULE_PATHNAME', 'chat_outbox_relay_worker_status';

CREATE OR REPLACE FUNCTION chat_outbox.relay_service_status(
	OUT service text, OUT last_relayed_id bigint, OUT last_relayed_at timestamptz, OUT relayed_total bigint,
	OUT service_error text, OUT layout int, OUT layout_change text)
	RETURNS SETOF record
	LANGUAGE c AS 'MODULE_PATHNAME', 'chat_outbox_relay_service_status';

-- The relay's Redis shards in order (chat_outbox.redis_url), each without its password.
CREATE OR REPLACE FUNCTION chat_outbox.relay_redis_shards(OUT shard int, OUT redis text)
	RETURNS SETOF record
	LANGUAGE c AS 'MODULE_PATHNAME', 'chat_outbox_relay_redis_shards';


-- unsent counts the rows waiting to be relayed; refused ones (kept unsent, skipped) are counted apart
CREATE FUNCTION chat_outbox.outbox_backlog(service text, OUT unsent bigint, OUT oldest_unsent_age interval,
	OUT refused bigint, OUT refused_reason text)
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
AS $backlog$
BEGIN
	EXECUTE format('SELECT count(*) FILTER (WHERE refused IS NULL), now() - min(created_at) FILTER (WHERE refused IS NULL),
		count(*) FILTER (WHERE refused IS NOT NULL), (array_agg(refused ORDER BY id) FILTER (WHERE refused IS NOT NULL))[1]
		FROM %I.outbox WHERE sent_at IS NULL', service)
		INTO unsent, oldest_unsent_age, refused, refused_reason;
EXCEPTION WHEN undefined_table OR invalid_schema_name THEN
	-- a service whose outbox is gone: its row shows NULLs (and the relay's service_error), the view still works
	unsent := NULL;
END
$backlog$;

-- The backlog per partition (chat_partition): one row for each of the service's partitions, empty ones too.
CREATE FUNCTION chat_outbox.partition_backlog(service text, partitions int, OUT partition int, OUT unsent bigint,
	OUT oldest_unsent_age interval)
	RETURNS SETOF record
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
AS $backlog$
BEGIN
	RETURN QUERY EXECUTE format('SELECT p.p, coalesce(b.unsent, 0), b.age FROM generate_series(0, $1 - 1) p(p)
		LEFT JOIN (SELECT chat_outbox.chat_partition(payload, $1) AS p, count(*) AS unsent, now() - min(created_at) AS age
			FROM %I.outbox WHERE sent_at IS NULL AND refused IS NULL GROUP BY 1) b ON b.p = p.p ORDER BY 1', service)
		USING partitions;
EXCEPTION WHEN undefined_table OR invalid_schema_name THEN
	RETURN; -- a service whose outbox is gone: no rows here, the status view shows why
END
$backlog$;

CREATE VIEW chat_outbox.status AS
	SELECT s.name AS service,
		s.queue,
		b.unsent,
		b.oldest_unsent_age,
		r.last_relayed_id,
		r.last_relayed_at,
		w.state AS relay_state,
		w.last_error,
		w.last_error_at,
		w.pid AS worker_pid,
		w.redis_warning,
		b.refused,
		b.refused_reason,
		r.service_error,
		w.redis_appendfsync,
		s.partitions,
		r.layout,
		r.layout_change
	FROM chat_outbox.services s
	CROSS JOIN LATERAL chat_outbox.outbox_backlog(s.name) b
	CROSS JOIN chat_outbox.relay_worker_status() w
	LEFT JOIN chat_outbox.relay_service_status() r ON r.service = s.name;
COMMENT ON VIEW chat_outbox.status IS 'Per outbox: backlog, last relayed id and time, the relay worker''s state, the partition count asked for and the one relayed under.';

-- Per partition of every service: its queue and Redis shard (the rules of common/partitions.hpp:
-- <queue> alone with one partition, else <queue>-p<partition>; shard = partition mod shards), its
-- backlog and lag. Which consumer works a partition is the daemons' to show (leases in Redis), not this view's.
CREATE VIEW chat_outbox.partition_status AS
	SELECT s.name AS service,
		b.partition,
		CASE WHEN s.partitions = 1 THEN s.queue ELSE s.queue || '-p' || b.partition END AS queue,
		b.partition % nullif(sh.shards, 0) AS shard,
		r.redis,
		b.unsent,
		b.oldest_unsent_age
	FROM chat_outbox.services s
	CROSS JOIN LATERAL chat_outbox.partition_backlog(s.name, s.partitions) b
	CROSS JOIN (SELECT count(*)::int AS shards FROM chat_outbox.relay_redis_shards()) sh
	LEFT JOIN chat_outbox.relay_redis_shards() r ON r.shard = b.partition % nullif(sh.shards, 0);
COMMENT ON VIEW chat_outbox.partition_status IS 'Per partition of each service: queue, Redis shard, unsent rows and the oldest one''s age.';

REVOKE ALL ON FUNCTION chat_outbox.create_service(text, text, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION chat_outbox.set_partitions(text, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION chat_outbox.grant_service(text, name, boolean) FROM PUBLIC;

-- The seed's two services: consumers -> workers on chat-messages, workers -> consumers on chat-replies.
SELECT chat_outbox.create_service('consumers', 'chat-messages');
SELECT chat_outbox.create_service('workers', 'chat-replies');

-- Created by this script, these tables belong to the extension, and pg_dump skips the data of
-- extension tables unless told otherwise. (Services created later are ordinary tables.)
SELECT pg_catalog.pg_extension_config_dump('chat_outbox.services', 'WHERE name NOT IN (''consumers'', ''workers'')');
SELECT pg_catalog.pg_extension_config_dump('consumers.messages', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.outbox', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.inbox', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.read_cursors', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.outbox_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.inbox_seq_seq', '');
SELECT pg_catalog.pg_extension_config_dump('workers.messages', '');
SELECT pg_catalog.pg_extension_config_dump('workers.outbox', '');
SELECT pg_catalog.pg_extension_config_dump('workers.inbox', '');
SELECT pg_catalog.pg_extension_config_dump('workers.read_cursors', '');
SELECT pg_catalog.pg_extension_config_dump('workers.outbox_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('workers.inbox_seq_seq', '');
