-- CREATE OR REPLACE: each update (sql/parts/update_*.sql) runs this same text over the previous version's functions.

-- The range of a service's partition count, with the error create_service() and set_partitions() give.
CREATE OR REPLACE FUNCTION chat_outbox.check_partitions(partitions int) RETURNS void
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

-- The one rule for a user id: a read cursor's user_id and a message's sender (both a token's sub).
-- 1 to 200 bytes (read_cursors' CHECK), no control character (a NUL cannot reach here: text cannot
-- hold one). Raises 22023 naming the argument; a NULL passes (callers decide whether NULL is allowed).
CREATE OR REPLACE FUNCTION chat_outbox.check_user_id(arg text, value text) RETURNS void
	LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
-- No SET clause: send_message calls it, and a SET costs every call a GUC save/restore; so every
-- name is schema-qualified, as in send_message.
AS $check$
BEGIN
	IF value OPERATOR(pg_catalog.=) '' OR pg_catalog.octet_length(value) OPERATOR(pg_catalog.>) 200 THEN
		RAISE EXCEPTION '% must be 1 to 200 bytes', arg
			USING ERRCODE = '22023',
				DETAIL = pg_catalog.format('It is %s bytes; a user id is the token''s sub.', pg_catalog.octet_length(value)),
				HINT = 'Pass 1 to 200 bytes.';
	END IF;
	IF value OPERATOR(pg_catalog.~) '[\x01-\x1f\x7f]' THEN
		RAISE EXCEPTION '% must not contain control characters', arg
			USING ERRCODE = '22023', DETAIL = 'A user id is the token''s sub.',
				HINT = 'Leave out U+0001 to U+001F and U+007F.';
	END IF;
END
$check$;

-- The one rule for a message body, send_message's and edit_message's: not NULL (22004), not empty
-- (22023), at most chat_outbox.max_body_bytes() bytes (22001). `fn` names the caller in the hint.
CREATE OR REPLACE FUNCTION chat_outbox.check_body(body text, fn text) RETURNS void
	LANGUAGE plpgsql STABLE PARALLEL SAFE
-- No SET clause, as check_user_id: send_message calls it; every name is schema-qualified.
AS $check$
DECLARE
	max_bytes int;
BEGIN
	IF body IS NULL THEN
		RAISE EXCEPTION 'body must not be null'
			USING ERRCODE = '22004', DETAIL = 'A message needs a body.',
				HINT = 'Pass the message text as the second argument of ' OPERATOR(pg_catalog.||) fn OPERATOR(pg_catalog.||) '().';
	END IF;
	IF body OPERATOR(pg_catalog.=) '' THEN
		RAISE EXCEPTION 'body must not be empty'
			USING ERRCODE = '22023', DETAIL = 'Empty messages are not stored or relayed.',
				HINT = 'Send at least one character.';
	END IF;
	max_bytes := chat_outbox.max_body_bytes();
	IF pg_catalog.octet_length(body) OPERATOR(pg_catalog.>) max_bytes THEN
		RAISE EXCEPTION 'body is too long'
			USING ERRCODE = '22001',
				DETAIL = pg_catalog.format('The body is %s bytes; the limit is %s bytes.', pg_catalog.octet_length(body), max_bytes),
				HINT = 'Shorten the message, or raise ' OPERATOR(pg_catalog.||) chat_outbox.max_body_bytes_setting() OPERATOR(pg_catalog.||) '.';
	END IF;
END
$check$;

-- The outbox as one reads it (for debugging; roles may SELECT it): every row of the generations,
-- sent_at (when the relay's cursor of the row's partition finished the tick that sent it, NULL while
-- unsent) and refused (why Redis refused it) derived, never stored. INSERT and UPDATE go through
-- chat_outbox.outbox_view_write.
CREATE OR REPLACE FUNCTION chat_outbox.outbox_view_sql(name text) RETURNS text
	LANGUAGE sql IMMUTABLE
RETURN pg_catalog.format($view$
		CREATE VIEW %1$I.outbox AS
			SELECT e.id, e.event, e.payload, e.created_at,
				CASE WHEN f.id IS NULL AND (pg_visible_in_snapshot(e.xid, c.done_snap)
					OR (e.id <= c.win_last AND pg_visible_in_snapshot(e.xid, c.win_snap))) THEN c.done_at END AS sent_at,
				f.reason AS refused, e.xid, e.chat_id, e.gen
			FROM %1$I.outbox_events e
			LEFT JOIN %1$I.outbox_refused f ON f.id = e.id
			LEFT JOIN chat_outbox.outbox_cursors c ON c.service = %1$L AND c.partition = chat_outbox.partition_of(e.chat_id, c.partitions);
		CREATE TRIGGER outbox_write INSTEAD OF INSERT OR UPDATE ON %1$I.outbox
			FOR EACH ROW EXECUTE FUNCTION chat_outbox.outbox_view_write();
	$view$, name);

-- The storage parameters of a service's three generations (create_outbox; the update to 1.4 for
-- services made before). A generation is emptied by TRUNCATE, never by vacuum, so no vacuum runs for
-- its inserts: one would only set the visibility bits of rows that are truncated a retention later,
-- and make the next checkpoint write those pages again. Vacuums against transaction id wraparound
-- still run, and ANALYZE still follows the inserts. Its TOAST table the same.
CREATE OR REPLACE FUNCTION chat_outbox.set_generation_storage(name text) RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $storage$
BEGIN
	FOR gen IN 0..2 LOOP
		EXECUTE format('ALTER TABLE %I.%I SET (autovacuum_vacuum_insert_threshold = -1, toast.autovacuum_vacuum_insert_threshold = -1)',
			name, 'outbox_events_' || gen);
	END LOOP;
END
$storage$;

-- A service's outbox (create_service; the update to 1.2 for services made before): written once
-- (docs/architecture.md, 'The write-once outbox'): three generations, LIST partitions of gen, that
-- take rows in turn and are truncated whole once the relay is past them; what is sent is the relay's
-- cursors' to say (chat_outbox.outbox_cursors), never a row's. xid is the writing transaction's id,
-- which the writers draw before the row's id and its generation; gen comes from the sequence
-- outbox_generation, read whatever the writer's snapshot (chat_outbox.outbox_generation). The id
-- sequence draws one id at a time (CACHE 1: a cached id would let a later message overtake an
-- earlier one; the relay refuses a service whose sequence caches).
CREATE OR REPLACE FUNCTION chat_outbox.create_outbox(name text) RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $create$
BEGIN
	EXECUTE format($ddl$
		CREATE SEQUENCE %1$I.outbox_id_seq CACHE 1;
		CREATE SEQUENCE %1$I.outbox_generation MINVALUE 0 START 0 CACHE 1;
		CREATE TABLE %1$I.outbox_events (
			xid pg_catalog.xid8 NOT NULL DEFAULT pg_catalog.pg_current_xact_id(),
			id bigint NOT NULL DEFAULT pg_catalog.nextval(%2$L),
			gen int NOT NULL DEFAULT chat_outbox.outbox_generation(%4$L, %3$L::pg_catalog.regclass),
			chat_id bigint, -- the payload's chat_id (chat_outbox.chat_id_of): its partition without reading the JSON
			event text NOT NULL,
			payload jsonb NOT NULL,
			created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
			PRIMARY KEY (id, gen)
		) PARTITION BY LIST (gen);
		ALTER SEQUENCE %1$I.outbox_id_seq OWNED BY %1$I.outbox_events.id;
		ALTER SEQUENCE %1$I.outbox_generation OWNED BY %1$I.outbox_events.gen;
		SELECT pg_catalog.setval(%3$L, 0, true);
		CREATE INDEX outbox_events_xid ON %1$I.outbox_events (xid, id);
		CREATE TABLE %1$I.outbox_events_0 PARTITION OF %1$I.outbox_events FOR VALUES IN (0);
		CREATE TABLE %1$I.outbox_events_1 PARTITION OF %1$I.outbox_events FOR VALUES IN (1);
		CREATE TABLE %1$I.outbox_events_2 PARTITION OF %1$I.outbox_events FOR VALUES IN (2);
		CREATE TRIGGER wake_relay AFTER INSERT ON %1$I.outbox_events
			FOR EACH STATEMENT EXECUTE FUNCTION chat_outbox.wake_relay();
		-- Rows Redis could not take as jobs, with why: kept unsent (the relay's windows leave them out)
		-- until an operator relays them (UPDATE <service>.outbox SET refused = NULL).
		CREATE TABLE %1$I.outbox_refused (
			id bigint PRIMARY KEY,
			gen int NOT NULL,
			reason text NOT NULL,
			refused_at timestamptz NOT NULL DEFAULT pg_catalog.now()
		);
	$ddl$, name, format('%I.outbox_id_seq', name), format('%I.outbox_generation', name), name);
	PERFORM chat_outbox.set_generation_storage(name);
	EXECUTE chat_outbox.outbox_view_sql(name);
	-- no row in outbox_rotation yet: the first rotation step makes it (so that a dump's rows, restored
	-- after CREATE EXTENSION, meet none)
	INSERT INTO chat_outbox.outbox_origins (service, origin) VALUES (name, chat_outbox.this_database());
END
$create$;

-- A service's changes waiting for their message (create_service; the update to 1.3 for services made
-- before): the target of every edit or delete in the inbox whose message is not there yet (its job
-- comes later: a job retried after a failure comes after the ones behind it). inbox_apply keeps it,
-- and the inbox's triggers read it once per statement, so that a plain message runs no trigger
-- function while nothing waits (define_service_functions). Filled from the inbox: empty for a new
-- service, the changes already waiting for one updated to 1.3 (whose inbox the update locked first).
CREATE OR REPLACE FUNCTION chat_outbox.create_inbox_waiting(name text) RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $create$
BEGIN
	EXECUTE format($ddl$
		CREATE TABLE %1$I.inbox_waiting (
			target uuid PRIMARY KEY,
			since timestamptz NOT NULL DEFAULT pg_catalog.now() -- when the first change of it arrived
		);
		INSERT INTO %1$I.inbox_waiting (target, since)
			SELECT c.target, min(c.received_at) FROM %1$I.inbox c
			WHERE c.target IS NOT NULL
				AND NOT EXISTS (SELECT FROM %1$I.inbox m WHERE m.message_id = c.target AND m.target IS NULL)
			GROUP BY c.target;
	$ddl$, name);
END
$create$;

-- The one rule for a client message id (send_message's client_msg_id, the gateway's send): 1 to 64
-- bytes, no control character (a NUL cannot reach here: text cannot hold one); 22023 otherwise. The
-- gateway refuses the same before the database (daemon/src/gateway/send/client_sends.cpp).
CREATE OR REPLACE FUNCTION chat_outbox.check_client_msg_id(value text) RETURNS void
	LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
-- No SET clause, as check_user_id: send_message calls it; every name is schema-qualified.
AS $check$
BEGIN
	IF value OPERATOR(pg_catalog.=) '' OR pg_catalog.octet_length(value) OPERATOR(pg_catalog.>) 64 THEN
		RAISE EXCEPTION 'client_msg_id must be 1 to 64 bytes'
			USING ERRCODE = '22023',
				DETAIL = pg_catalog.format('It is %s bytes.', pg_catalog.octet_length(value)),
				HINT = 'Pass 1 to 64 bytes, a UUID for example.';
	END IF;
	IF value OPERATOR(pg_catalog.~) '[\x01-\x1f\x7f]' THEN
		RAISE EXCEPTION 'client_msg_id must not contain control characters'
			USING ERRCODE = '22023', HINT = 'Leave out U+0001 to U+001F and U+007F.';
	END IF;
END
$check$;

-- A service's client message ids (create_service; the update to 1.6 for services made before, in
-- sql/parts/update_1.6_client_msg_id.sql): the key a sender gives send_message so that sending the
-- same message again, after a lost answer, stores it once. One row per key, (chat_id, sender,
-- client_msg_id), written by send_message in the message's transaction: the primary key makes a
-- concurrent repeat wait for the first one's COMMIT, then find it. sender is '' for a message sent
-- without one ('' is never a sender: chat_outbox.check_user_id). body_md5 is the first body's, so a
-- repeat is recognised after its message was edited or deleted. A key lives as long as its message's
-- row (docs/client-protocol.md, 'Client message ids'); no key is ever purged by the relays.
CREATE OR REPLACE FUNCTION chat_outbox.create_client_msg_ids(name text) RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $create$
BEGIN
	EXECUTE format($ddl$
		CREATE TABLE IF NOT EXISTS %1$I.client_msg_ids (
			chat_id bigint NOT NULL,
			sender text NOT NULL,
			client_msg_id text NOT NULL,
			message_id uuid NOT NULL,
			body_md5 text NOT NULL,
			created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
			PRIMARY KEY (chat_id, sender, client_msg_id)
		);
	$ddl$, name);
END
$create$;

CREATE OR REPLACE FUNCTION chat_outbox.create_service(name text, queue text DEFAULT NULL, partitions int DEFAULT 1) RETURNS void
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
			created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
			sender text, -- the author (send_message's sender; the gateway passes the token's sub), NULL when not given
			-- edit_message / delete_message: a deleted message's body is '' (gone, not hidden); version
			-- counts its edits and its delete, so a receiver never lets an older one win
			edited_at timestamptz,
			deleted_at timestamptz,
			version int NOT NULL DEFAULT 0
		);

		CREATE TABLE %1$I.inbox (
			message_id uuid PRIMARY KEY,
			chat_id bigint NOT NULL,
			body text NOT NULL,
			created_at timestamptz,
			received_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
			seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
			sender text, -- the payload's sender, NULL when it has none
			-- A row is a message (target NULL) or an edit or delete of message `target` (kind 'edited' or
			-- 'deleted', message_id the event's id): events take seqs in the same order as messages, so
			-- clients replay them in order. inbox_apply (BEFORE INSERT) keeps every row in the state
			-- after the newest change: a message's row and its events' rows carry the current body, a
			-- deleted message's body is '' on all of them.
			target uuid,
			kind text CHECK (kind IN ('edited', 'deleted')),
			version int NOT NULL DEFAULT 0,
			edited_at timestamptz,
			deleted_at timestamptz
		);
		CREATE INDEX inbox_chat_seq ON %1$I.inbox (chat_id, seq);
		CREATE INDEX inbox_target ON %1$I.inbox (target) WHERE target IS NOT NULL;
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
	PERFORM chat_outbox.create_outbox(name);
	PERFORM chat_outbox.create_inbox_waiting(name);
	PERFORM chat_outbox.create_client_msg_ids(name);
	PERFORM chat_outbox.define_service_functions(name);

	INSERT INTO chat_outbox.services (name, queue, partitions) VALUES (create_service.name, q, create_service.partitions);
END
$create$;
COMMENT ON FUNCTION chat_outbox.create_service(text, text, int) IS
	'Creates schema <name> with messages, outbox, inbox and send_message(), relayed to BullMQ queue <queue> (default <name>-messages), or with partitions > 1 to queues <queue>-p0 ... <queue>-p<partitions-1>.';

-- The functions of service <name>'s schema and the inbox's triggers, (re)defined: by create_service()
-- and by an update that changes them, for every existing service (sql/parts/update_*.sql), so both
-- get the same text. CREATE OR REPLACE keeps the grants and the owner of a function whose signature
-- stays. Not SECURITY DEFINER, so callable by anyone
-- (as create_service is by whom it is granted to): it runs with the caller's rights, which must
-- create in the schema or own the functions already there.
CREATE OR REPLACE FUNCTION chat_outbox.define_service_functions(name text) RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $define$
BEGIN
	-- send_message and publish_event are the only way roles write the outbox (grant_service gives
	-- no INSERT on it): SECURITY DEFINER, so every outbox row went through their checks.
	-- No SET clause: it would stop plan caching and cost every call a GUC save/restore. Without it
	-- the caller's search_path is in force, so every name in the bodies is schema-qualified, down
	-- to the operators and the types of casts (only keyword types such as int are not: the grammar
	-- maps them to pg_catalog). An unqualified name would let a caller's own object run as the owner.
	EXECUTE format($fn$
		-- send_message with a client_msg_id stores the message once per (chat_id, sender, client_msg_id):
		-- the same key again answers the message stored first (its row as it is now) and writes nothing,
		-- while that message's row exists; with another body it is refused (CM409). A concurrent
		-- repeat waits on the key's unique index for the first one's COMMIT (or ROLLBACK: then it
		-- stores its own). A repeat's answer is marked in the transaction-local setting
		-- chat_outbox_send.repeat (the message's id), which the gateway reads to send no `sent` twice.
		CREATE OR REPLACE FUNCTION %1$I.send_message(chat_id bigint, body text, sender text DEFAULT NULL,
			client_msg_id text DEFAULT NULL) RETURNS %1$I.messages
			LANGUAGE plpgsql SECURITY DEFINER
		AS $body$
		#variable_conflict use_variable
		DECLARE
			m %1$I.messages;
			-- the key's row, as scalars: a declared row type of client_msg_ids would need the table when
			-- the function is defined (the update to 1.6 defines it before it makes the table)
			claimed uuid;
			k_message uuid;
			k_md5 text;
		BEGIN
			IF chat_id IS NULL THEN
				RAISE EXCEPTION 'chat_id must not be null'
					USING ERRCODE = '22004', DETAIL = 'Every message belongs to a chat.',
						HINT = 'Pass the chat''s id as the first argument of send_message().';
			END IF;
			PERFORM chat_outbox.check_body(body, 'send_message');
			IF sender IS NOT NULL THEN
				PERFORM chat_outbox.check_user_id('sender', sender);
			END IF;
			IF client_msg_id IS NULL THEN
				-- the message's row gives the transaction its xid before the event's id and generation are drawn
				INSERT INTO %1$I.messages (chat_id, body, sender) VALUES (chat_id, body, sender) RETURNING * INTO m;
			ELSE
				PERFORM chat_outbox.check_client_msg_id(client_msg_id);
				LOOP
					-- the key's row gives the transaction its xid before the event's id and generation are drawn
					INSERT INTO %1$I.client_msg_ids AS c (chat_id, sender, client_msg_id, message_id, body_md5)
						VALUES (chat_id, COALESCE(sender, ''), client_msg_id, pg_catalog.gen_random_uuid(), pg_catalog.md5(body))
						ON CONFLICT ON CONSTRAINT client_msg_ids_pkey DO NOTHING
						RETURNING c.message_id INTO claimed;
					EXIT WHEN claimed IS NOT NULL;
					SELECT c.message_id, c.body_md5 INTO k_message, k_md5 FROM %1$I.client_msg_ids c WHERE c.chat_id OPERATOR(pg_catalog.=) chat_id
						AND c.sender OPERATOR(pg_catalog.=) COALESCE(sender, '') AND c.client_msg_id OPERATOR(pg_catalog.=) client_msg_id;
					CONTINUE WHEN NOT FOUND; -- its message's row was removed meanwhile, and the key with it: claim it again
					SELECT * INTO m FROM %1$I.messages t WHERE t.id OPERATOR(pg_catalog.=) k_message;
					IF NOT FOUND THEN
						-- the message's row is gone (removed by hand): the key is free again
						DELETE FROM %1$I.client_msg_ids c WHERE c.chat_id OPERATOR(pg_catalog.=) chat_id
							AND c.sender OPERATOR(pg_catalog.=) COALESCE(sender, '') AND c.client_msg_id OPERATOR(pg_catalog.=) client_msg_id;
						CONTINUE;
					END IF;
					IF k_md5 OPERATOR(pg_catalog.<>) pg_catalog.md5(body) THEN
						RAISE EXCEPTION 'client_msg_id %% was used for another message', client_msg_id
							USING ERRCODE = 'CM409',
								DETAIL = pg_catalog.format('Message %%s of chat %%s has this client_msg_id and another body.', m.id, m.chat_id),
								HINT = 'Give every new message a new client_msg_id; send the same body to repeat a send.';
					END IF;
					PERFORM pg_catalog.set_config('chat_outbox_send.repeat', m.id::text, true);
					RETURN m;
				END LOOP;
				INSERT INTO %1$I.messages (id, chat_id, body, sender) VALUES (claimed, chat_id, body, sender) RETURNING * INTO m;
			END IF;
			INSERT INTO %1$I.outbox_events (chat_id, event, payload) VALUES (m.chat_id, 'message.created',
				CASE WHEN client_msg_id IS NULL
					THEN pg_catalog.jsonb_build_object('id', m.id, 'chat_id', m.chat_id, 'body', m.body, 'created_at', m.created_at,
						'sender', m.sender)
					ELSE pg_catalog.jsonb_build_object('id', m.id, 'chat_id', m.chat_id, 'body', m.body, 'created_at', m.created_at,
						'sender', m.sender, 'client_msg_id', client_msg_id) END);
			RETURN m;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.send_message(bigint, text, text, text) FROM PUBLIC;

		CREATE OR REPLACE FUNCTION %1$I.publish_event(event text, payload jsonb) RETURNS %1$I.outbox
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
			PERFORM pg_catalog.pg_current_xact_id(); -- the xid before the event's id and generation
			INSERT INTO %1$I.outbox_events (chat_id, event, payload) VALUES (chat_outbox.chat_id_of(payload), event, payload)
				RETURNING id, event, payload, created_at, NULL::pg_catalog.timestamptz, NULL::pg_catalog.text, xid, chat_id, gen INTO o;
			RETURN o;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.publish_event(text, jsonb) FROM PUBLIC;

		-- mark_read: user_id has read chat_id up to inbox seq `seq`. The cursor becomes the highest
		-- inbox row of the chat at or below it (so it always names a received message), and only if
		-- that is above the stored one: a cursor never moves backwards. Returns the cursor now stored
		-- (NULLs when there is none) and whether this call moved it.
		CREATE OR REPLACE FUNCTION %1$I.mark_read(chat_id bigint, user_id text, seq bigint,
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
			PERFORM chat_outbox.check_user_id('user_id', user_id);
			SELECT i.seq, i.message_id INTO s, m FROM %1$I.inbox i
				WHERE i.chat_id OPERATOR(pg_catalog.=) chat_id AND i.seq OPERATOR(pg_catalog.<=) seq AND i.target IS NULL
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

		-- edit_message / delete_message: a change of a message this service sent, relayed in the same
		-- outbox as the message, so in the same per-chat order. The message's row is locked, so two
		-- changes of one message get versions (and outbox ids) in the order they commit; each event has
		-- its own id (the BullMQ jobId: a change relayed twice is one job) and names the message in
		-- message_id. A deleted message's body is '' here too. Both are idempotent against the message's
		-- state: an edit to the body the message has, or a delete of a message deleted already, answers
		-- the message as it is and writes nothing (sent again after a lost answer, it changes nothing).
		CREATE OR REPLACE FUNCTION %1$I.edit_message(message_id uuid, body text, sender text DEFAULT NULL) RETURNS %1$I.messages
			LANGUAGE plpgsql SECURITY DEFINER
		AS $body$
		#variable_conflict use_variable
		DECLARE
			m %1$I.messages;
		BEGIN
			PERFORM chat_outbox.check_body(body, 'edit_message');
			m := %1$I.changed_message(message_id, sender, 'edit_message');
			IF m.body OPERATOR(pg_catalog.=) body THEN
				RETURN m; -- the body it has already (an edit sent again after a lost answer): nothing to change
			END IF;
			UPDATE %1$I.messages t SET body = body, edited_at = pg_catalog.now(), version = t.version OPERATOR(pg_catalog.+) 1
				WHERE t.id OPERATOR(pg_catalog.=) message_id RETURNING t.* INTO m;
			-- changed_message locked the message's row: the transaction has its xid before the event's id
			INSERT INTO %1$I.outbox_events (chat_id, event, payload) VALUES (m.chat_id, 'message.edited',
				pg_catalog.jsonb_build_object('id', pg_catalog.gen_random_uuid(), 'message_id', m.id, 'chat_id', m.chat_id,
					'body', m.body, 'edited_at', m.edited_at, 'sender', m.sender, 'version', m.version));
			RETURN m;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.edit_message(uuid, text, text) FROM PUBLIC;

		CREATE OR REPLACE FUNCTION %1$I.delete_message(message_id uuid, sender text DEFAULT NULL) RETURNS %1$I.messages
			LANGUAGE plpgsql SECURITY DEFINER
		AS $body$
		#variable_conflict use_variable
		DECLARE
			m %1$I.messages;
		BEGIN
			-- a message deleted already, by this sender (or any, without one), is answered as it is and
			-- nothing is written: a delete sent again after a lost answer
			SELECT * INTO m FROM %1$I.messages t WHERE t.id OPERATOR(pg_catalog.=) message_id FOR UPDATE;
			IF m.deleted_at IS NOT NULL AND (sender IS NULL OR m.sender OPERATOR(pg_catalog.=) sender) THEN
				RETURN m;
			END IF;
			m := %1$I.changed_message(message_id, sender, 'delete_message');
			UPDATE %1$I.messages t SET body = '', deleted_at = pg_catalog.now(), version = t.version OPERATOR(pg_catalog.+) 1
				WHERE t.id OPERATOR(pg_catalog.=) message_id RETURNING t.* INTO m;
			-- changed_message locked the message's row: the transaction has its xid before the event's id
			INSERT INTO %1$I.outbox_events (chat_id, event, payload) VALUES (m.chat_id, 'message.deleted',
				pg_catalog.jsonb_build_object('id', pg_catalog.gen_random_uuid(), 'message_id', m.id, 'chat_id', m.chat_id,
					'deleted_at', m.deleted_at, 'sender', m.sender, 'version', m.version));
			RETURN m;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.delete_message(uuid, text) FROM PUBLIC;

		-- changed_message: the checks edit_message and delete_message share, on the message locked FOR
		-- UPDATE: it exists in this service's messages (P0002: unknown, or another service's), is not
		-- deleted (55000: an edit; delete_message answers a deleted message of its sender itself), and when sender is given it is the message's sender (42501).
		CREATE OR REPLACE FUNCTION %1$I.changed_message(message_id uuid, sender text, fn text) RETURNS %1$I.messages
			LANGUAGE plpgsql SECURITY DEFINER
		AS $body$
		#variable_conflict use_variable
		DECLARE
			m %1$I.messages;
		BEGIN
			IF message_id IS NULL THEN
				RAISE EXCEPTION 'message_id must not be null'
					USING ERRCODE = '22004', HINT = 'Pass the id send_message() returned as the first argument of ' OPERATOR(pg_catalog.||) fn OPERATOR(pg_catalog.||) '().';
			END IF;
			IF sender IS NOT NULL THEN
				PERFORM chat_outbox.check_user_id('sender', sender);
			END IF;
			SELECT * INTO m FROM %1$I.messages t WHERE t.id OPERATOR(pg_catalog.=) message_id FOR UPDATE;
			IF NOT FOUND THEN
				RAISE EXCEPTION 'message %% does not exist', message_id
					USING ERRCODE = 'P0002', DETAIL = pg_catalog.format('%%s changes only messages service %%s sent.', fn, %2$L);
			END IF;
			IF m.deleted_at IS NOT NULL THEN
				RAISE EXCEPTION 'message %% is deleted', message_id
					USING ERRCODE = '55000', DETAIL = 'A deleted message cannot change.';
			END IF;
			IF sender IS NOT NULL AND m.sender IS DISTINCT FROM sender THEN
				RAISE EXCEPTION 'message %% was not sent by %%', message_id, sender
					USING ERRCODE = '42501', DETAIL = 'Only its sender may change a message.';
			END IF;
			RETURN m;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.changed_message(uuid, text, text) FROM PUBLIC;

		-- inbox_apply: every inbox row is stored in the state after the newest change of its message,
		-- whatever order the jobs came in (a job retried after a failure comes later than the ones
		-- after it). A message takes the changes that arrived before it; an edit updates its message
		-- when it is newer (version), else its row carries the newer state; a delete empties the body
		-- of the message and of all its events. A change whose message is not there yet waits for it
		-- in inbox_waiting until the message takes it. The receiver's writes are serialized by the
		-- inbox lock (daemon/src/inbox/core/inbox_sql.hpp); the trigger also fires for a row ON
		-- CONFLICT DO NOTHING then drops, which is why every step can run twice.
		-- It runs for every change, and for a message only while a change waits (the trigger's WHEN,
		-- below): only a waiting change can give a message a state other than its own.
		CREATE OR REPLACE FUNCTION %1$I.inbox_apply() RETURNS trigger
			LANGUAGE plpgsql SECURITY DEFINER
		AS $body$
		DECLARE
			s record; -- the message's state: its row, else its newest event (a delete first)
		BEGIN
			IF NEW.target IS NULL THEN
				SELECT t.kind, t.body, t.edited_at, t.deleted_at, t.version INTO s FROM %1$I.inbox t
					WHERE t.target OPERATOR(pg_catalog.=) NEW.message_id
					ORDER BY t.deleted_at IS NULL, t.version DESC LIMIT 1;
				IF NOT FOUND THEN
					RETURN NEW;
				END IF;
				DELETE FROM %1$I.inbox_waiting w WHERE w.target OPERATOR(pg_catalog.=) NEW.message_id;
				IF s.deleted_at IS NOT NULL THEN
					NEW.body := ''; NEW.deleted_at := s.deleted_at; NEW.version := s.version;
				ELSIF s.version OPERATOR(pg_catalog.>) NEW.version THEN
					NEW.body := s.body; NEW.edited_at := s.edited_at; NEW.version := s.version;
				END IF;
				RETURN NEW;
			END IF;
			SELECT t.chat_id, t.body, t.edited_at, t.deleted_at, t.version INTO s FROM %1$I.inbox t
				WHERE t.message_id OPERATOR(pg_catalog.=) NEW.target AND t.target IS NULL FOR UPDATE;
			IF FOUND THEN
				NEW.chat_id := s.chat_id; -- an event is shown in its message's chat
			ELSE
				SELECT NULL::bigint AS chat_id, t.body, t.edited_at, t.deleted_at, t.version INTO s FROM %1$I.inbox t
					WHERE t.target OPERATOR(pg_catalog.=) NEW.target ORDER BY t.deleted_at IS NULL, t.version DESC LIMIT 1;
				-- the message is not there yet: the change waits for it, and the rest of this statement's
				-- messages run the trigger (one of them may be it)
				INSERT INTO %1$I.inbox_waiting (target) VALUES (NEW.target) ON CONFLICT (target) DO NOTHING;
				PERFORM pg_catalog.set_config(%3$L, 'on', true);
			END IF;
			IF NEW.kind OPERATOR(pg_catalog.=) 'deleted' OR s.deleted_at IS NOT NULL THEN
				NEW.body := '';
				NEW.edited_at := NULL;
				NEW.deleted_at := coalesce(s.deleted_at, NEW.deleted_at, pg_catalog.now());
				IF s.deleted_at IS NULL THEN
					UPDATE %1$I.inbox t SET body = '', deleted_at = NEW.deleted_at
						WHERE (t.message_id OPERATOR(pg_catalog.=) NEW.target AND t.target IS NULL)
							OR t.target OPERATOR(pg_catalog.=) NEW.target;
				END IF;
			ELSIF s.version IS NOT NULL AND s.version OPERATOR(pg_catalog.>=) NEW.version THEN
				NEW.body := s.body; NEW.edited_at := s.edited_at; -- an older edit: its row shows the newer one
			ELSIF s.chat_id IS NOT NULL THEN
				UPDATE %1$I.inbox t SET body = NEW.body, edited_at = NEW.edited_at, version = NEW.version
					WHERE t.message_id OPERATOR(pg_catalog.=) NEW.target AND t.target IS NULL;
			END IF;
			RETURN NEW;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.inbox_apply() FROM PUBLIC;

		-- inbox_waiting_check: once per INSERT statement on the inbox, before its rows, whether a change
		-- waits for its message, into the transaction-local setting %3$s ('on' or 'off') that
		-- inbox_apply's WHEN reads for each message. The rule stays inbox_apply's: this only says when a
		-- message needs it. The setting is not under chat_outbox.: the extension reserves that prefix.
		CREATE OR REPLACE FUNCTION %1$I.inbox_waiting_check() RETURNS trigger
			LANGUAGE plpgsql SECURITY DEFINER
		AS $body$
		BEGIN
			PERFORM pg_catalog.set_config(%3$L, CASE WHEN EXISTS (SELECT FROM %1$I.inbox_waiting) THEN 'on' ELSE 'off' END, true);
			RETURN NULL;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.inbox_waiting_check() FROM PUBLIC;

		-- inbox_waiting_purge: after inbox rows are deleted (the relay's purge past inbox_retention) or
		-- the inbox truncated, a message none of whose changes is left has nothing waiting for it: a
		-- message that never comes keeps the trigger on for messages no longer than its changes are
		-- kept. One probe of the target index per waiting row (there are few, mostly none), never a
		-- join the planner might make a scan of the whole inbox at every purge statement.
		CREATE OR REPLACE FUNCTION %1$I.inbox_waiting_purge() RETURNS trigger
			LANGUAGE plpgsql SECURITY DEFINER
		AS $body$
		DECLARE
			waiting uuid;
		BEGIN
			FOR waiting IN SELECT w.target FROM %1$I.inbox_waiting w LOOP
				IF NOT EXISTS (SELECT FROM %1$I.inbox t WHERE t.target OPERATOR(pg_catalog.=) waiting) THEN
					DELETE FROM %1$I.inbox_waiting w WHERE w.target OPERATOR(pg_catalog.=) waiting;
				END IF;
			END LOOP;
			RETURN NULL;
		END
		$body$;
		REVOKE ALL ON FUNCTION %1$I.inbox_waiting_purge() FROM PUBLIC;

		CREATE OR REPLACE TRIGGER inbox_waiting_check BEFORE INSERT ON %1$I.inbox
			FOR EACH STATEMENT EXECUTE FUNCTION %1$I.inbox_waiting_check();
		CREATE OR REPLACE TRIGGER inbox_apply BEFORE INSERT ON %1$I.inbox
			FOR EACH ROW WHEN (NEW.target IS NOT NULL OR pg_catalog.current_setting(%3$L, true) OPERATOR(pg_catalog.=) 'on')
			EXECUTE FUNCTION %1$I.inbox_apply();
		CREATE OR REPLACE TRIGGER inbox_waiting_purge AFTER DELETE OR TRUNCATE ON %1$I.inbox
			FOR EACH STATEMENT EXECUTE FUNCTION %1$I.inbox_waiting_purge();
	$fn$, name, name, 'chat_outbox_waiting.' || name);
END
$define$;

-- A live change of the partition count: the relay stops relaying the service until every queue of
-- the old layout is empty, then SETs the new count in Redis and relays under it (per-chat order
-- holds across the change; docs/architecture.md, 'Changing the number of partitions').
CREATE OR REPLACE FUNCTION chat_outbox.set_partitions(service text, partitions int) RETURNS void
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
CREATE OR REPLACE FUNCTION chat_outbox.chat_partition(payload jsonb, partitions int) RETURNS int
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN jsonb_typeof(payload -> 'chat_id') = 'number' AND (payload ->> 'chat_id') ~ '^-?[0-9]{1,19}$'
		AND (payload ->> 'chat_id')::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
	THEN ((((payload ->> 'chat_id')::bigint % partitions) + partitions) % partitions)::int ELSE 0 END;

CREATE OR REPLACE FUNCTION chat_outbox.grant_service(service text, role name, receiver boolean DEFAULT false) RETURNS void
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
	EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.send_message(bigint, text, text, text), %1$I.edit_message(uuid, text, text), '
		'%1$I.delete_message(uuid, text), %1$I.publish_event(text, jsonb) TO %2$I', service, role);
	-- The role the receiving daemon runs as stores what it receives: it may add inbox rows, but
	-- only these columns. seq and received_at always come from their defaults (no OVERRIDING
	-- SYSTEM VALUE: clients resume from seq), and no row is ever deleted; rows change only through
	-- the inbox_apply trigger (edits and deletes, as the owner). An application's role gets no write
	-- on any table at all.
	IF receiver THEN
		EXECUTE format('GRANT INSERT (message_id, chat_id, body, created_at, sender, target, kind, version, edited_at, deleted_at) '
			'ON %1$I.inbox TO %2$I', service, role);
		-- and it stores its clients' read cursors, only through mark_read's checks
		EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.mark_read(bigint, text, bigint) TO %2$I', service, role);
		-- and, with --authz membership, reads who is a member of which chat
		EXECUTE format('GRANT USAGE ON SCHEMA chat_outbox TO %I', role);
		EXECUTE format('GRANT SELECT ON chat_outbox.members TO %I', role);
		EXECUTE format('GRANT EXECUTE ON FUNCTION chat_outbox.check_member(bigint, text) TO %I', role);
	ELSE
		-- the application decides who is in which chat: through add_member/remove_member, or in bulk
		-- (the table's CHECK and its triggers hold for every row, so the gateways learn of each change)
		EXECUTE format('GRANT USAGE ON SCHEMA chat_outbox TO %I', role);
		EXECUTE format('GRANT EXECUTE ON FUNCTION chat_outbox.add_member(bigint, text), chat_outbox.remove_member(bigint, text) TO %I', role);
		EXECUTE format('GRANT SELECT, INSERT, DELETE ON chat_outbox.members TO %I', role);
	END IF;
END
$grant$;
COMMENT ON FUNCTION chat_outbox.grant_service(text, name, boolean) IS
	'Gives a role exactly its service''s schema: read its tables, send through send_message/publish_event, change its messages through edit_message/delete_message; with receiver => true also store received messages in the inbox (the receiving daemon''s role); nothing of other services.';

-- An update's change of one existing service (sql/parts/update_*.sql), the same in the extension's
-- update script and the managed update: runs `ddl` (its %1$I the service's schema, %1$L its name),
-- then defines the service's functions anew (define_service_functions). A service of CREATE
-- EXTENSION belongs to the extension; one made later stays outside it: its functions are lent to
-- the extension for CREATE OR REPLACE (an extension script may replace only its own), and everything
-- of its schema the update made or lent is taken back after.
CREATE OR REPLACE FUNCTION chat_outbox.update_service(name text, ddl text) RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $update$
DECLARE
	ext oid := (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'chat_outbox');
	seed boolean;
	fn text;
	o record;
BEGIN
	seed := ext IS NOT NULL AND EXISTS (SELECT FROM pg_catalog.pg_depend d
		WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = format('%I.messages', name)::regclass
			AND d.refobjid = ext AND d.deptype = 'e');
	IF ext IS NOT NULL AND NOT seed THEN
		FOREACH fn IN ARRAY ARRAY[format('%I.send_message(bigint, text, text)', name), format('%I.send_message(bigint, text, text, text)', name),
			format('%I.edit_message(uuid, text, text)', name),
			format('%I.delete_message(uuid, text)', name), format('%I.changed_message(uuid, text, text)', name),
			format('%I.mark_read(bigint, text, bigint)', name), format('%I.publish_event(text, jsonb)', name),
			format('%I.inbox_apply()', name), format('%I.inbox_waiting_check()', name), format('%I.inbox_waiting_purge()', name)]
		LOOP
			IF pg_catalog.to_regprocedure(fn) IS NOT NULL THEN
				EXECUTE format('ALTER EXTENSION chat_outbox ADD FUNCTION %s', fn);
			END IF;
		END LOOP;
	END IF;
	IF ddl IS NOT NULL THEN
		EXECUTE format(ddl, name);
	END IF;
	PERFORM chat_outbox.define_service_functions(name);
	IF ext IS NOT NULL AND NOT seed THEN
		FOR o IN SELECT (pg_catalog.pg_identify_object(d.classid, d.objid, d.objsubid)).*
			FROM pg_catalog.pg_depend d
			WHERE d.refobjid = ext AND d.deptype = 'e'
		LOOP
			IF o.schema = name THEN
				EXECUTE format('ALTER EXTENSION chat_outbox DROP %s %s', o.type, o.identity);
			END IF;
		END LOOP;
	END IF;
END
$update$;
