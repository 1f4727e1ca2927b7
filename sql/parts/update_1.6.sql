-- The update from 1.5 to 1.6 (docs/architecture.md, 'The write-once outbox'). Runs after the shared
-- functions are in place; the extension's chat_outbox--1.5--1.6.sql and the managed install's
-- update_1.6.sql are this text, after every sql/parts/update_1.6*.sql before it in name order
-- (sql/managed/generate.py). In one transaction, while senders and relays go on: the relays' passes
-- and every service's outbox are locked first (below: a pass or a write in flight commits before,
-- the write with 1.5's read of the generation; one that comes after waits, then reads the new
-- sequence); each service's generation sequence is made at the generation 1.5 wrote to and becomes
-- the default of gen, and its functions are defined anew (they leave gen to that default). The generations 1.5 closed are closed again by the next
-- rotation step: 1.5's bound (a snapshot's xmax) may be at or below a writer's xid, and a writer
-- that read the generation with an old snapshot may have written to it after; until then the windows
-- read them. This database is recorded as each outbox's origin: update a database before moving it.
-- Idempotent: a service that has its generation sequence already is left as it is.

-- First the locks, in the order the relays and the senders take theirs, so that no one waits in a
-- circle: the services (a relay's pass takes its service's row first, and holds the rotation's table
-- and the outbox from one batch to the next: passes in flight finish, the next wait), then every
-- outbox against writes (a send takes its outbox before it reads anything this update changes: sends
-- in flight commit, the next wait). A rotation step's truncate meets the outbox's lock and waits for
-- its next round.
DO $locks$
DECLARE
	svc text;
BEGIN
	LOCK TABLE chat_outbox.services IN EXCLUSIVE MODE;
	FOR svc IN SELECT s.name FROM chat_outbox.services s ORDER BY s.name LOOP
		IF pg_catalog.to_regclass(format('%I.outbox_events', svc)) IS NOT NULL THEN
			EXECUTE format('LOCK TABLE %I.outbox_events IN SHARE ROW EXCLUSIVE MODE', svc);
		END IF;
	END LOOP;
END
$locks$;
ALTER TABLE chat_outbox.outbox_rotation ADD COLUMN IF NOT EXISTS opened int CHECK (opened BETWEEN 0 AND 2);
ALTER TABLE chat_outbox.outbox_cursors ADD COLUMN IF NOT EXISTS origin text NOT NULL DEFAULT chat_outbox.this_database();
ALTER TABLE chat_outbox.outbox_cursors ADD COLUMN IF NOT EXISTS made uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid();
ALTER TABLE chat_outbox.outbox_cursors ADD COLUMN IF NOT EXISTS marked text;
DO $key$
BEGIN
	IF (SELECT cardinality(c.conkey) FROM pg_catalog.pg_constraint c
			WHERE c.conrelid = 'chat_outbox.outbox_cursors'::regclass AND c.contype = 'p') = 2 THEN
		ALTER TABLE chat_outbox.outbox_cursors DROP CONSTRAINT outbox_cursors_pkey, ADD PRIMARY KEY (service, partition, origin);
	END IF;
END
$key$;
COMMENT ON TABLE chat_outbox.outbox_rotation IS 'Per service: the rotation''s state of its outbox generations.';
CREATE TABLE IF NOT EXISTS chat_outbox.outbox_origins (
	service text NOT NULL,
	origin text NOT NULL,
	token uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid(),
	PRIMARY KEY (service, token)
);
COMMENT ON TABLE chat_outbox.outbox_origins IS 'Per service: the database whose transaction ids its outbox rows and cursors carry.';
DO $update$
DECLARE
	svc text;
BEGIN
	FOR svc IN SELECT s.name FROM chat_outbox.services s ORDER BY s.name LOOP
		IF pg_catalog.to_regclass(format('%I.outbox_generation', svc)) IS NOT NULL THEN
			CONTINUE;
		END IF;
		PERFORM chat_outbox.update_service(svc, $ddl$
			CREATE SEQUENCE %1$I.outbox_generation MINVALUE 0 START 0 CACHE 1;
			ALTER SEQUENCE %1$I.outbox_generation OWNED BY %1$I.outbox_events.gen;
			SELECT pg_catalog.setval('%1$I.outbox_generation',
				coalesce((SELECT r.current FROM chat_outbox.outbox_rotation r WHERE r.service = %1$L), 0), true);
			ALTER TABLE %1$I.outbox_events ALTER COLUMN gen
				SET DEFAULT chat_outbox.outbox_generation(%1$L, '%1$I.outbox_generation'::pg_catalog.regclass);
		$ddl$);
		UPDATE chat_outbox.outbox_rotation r SET closed_xmax = '{NULL,NULL,NULL}' WHERE r.service = svc;
		INSERT INTO chat_outbox.outbox_origins (service, origin) VALUES (svc, chat_outbox.this_database());
	END LOOP;
END
$update$;
