-- The update from 1.1 to 1.2 of every existing service: the write-once outbox. Runs after the new
-- tables (outbox_tables.sql) and the shared functions are in place; the extension's
-- chat_outbox--1.1--1.2.sql and the managed install's update_1.2.sql are this text, after every
-- sql/parts/update_1.2*.sql before it in name order (sql/managed/generate.py). In one transaction,
-- while senders go on: each service's 1.1 outbox table is locked (its senders in flight commit
-- first), its unsent rows move to the new generations with their ids and its refused ones with
-- their reasons, and it is dropped; the new send functions replace the old ones. A send that waited
-- for the lock then writes through the outbox view, into the new tables. Idempotent: a service whose
-- outbox is already the view is left as it is.
DO $update$
DECLARE
	ext oid := (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'chat_outbox');
	svc text;
	seed boolean;
	old_owner oid;
	old_acl aclitem[];
	top bigint;
	fn text;
	o record;
	a record;
	fns text[];
BEGIN
	FOR svc IN SELECT s.name FROM chat_outbox.services s ORDER BY s.name LOOP
		IF (SELECT c.relkind FROM pg_catalog.pg_class c WHERE c.oid = pg_catalog.to_regclass(format('%I.outbox', svc))) IS DISTINCT FROM 'r' THEN
			CONTINUE;
		END IF;
		EXECUTE format('LOCK TABLE %I.outbox IN ACCESS EXCLUSIVE MODE', svc);
		-- a service of CREATE EXTENSION belongs to the extension; one made later stays outside it: its
		-- functions are lent to the extension for CREATE OR REPLACE and everything of it taken back after
		seed := ext IS NOT NULL AND EXISTS (SELECT FROM pg_catalog.pg_depend d
			WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = format('%I.messages', svc)::regclass
				AND d.refobjid = ext AND d.deptype = 'e');
		fns := ARRAY[format('%I.send_message(bigint, text, text)', svc), format('%I.edit_message(uuid, text, text)', svc),
			format('%I.delete_message(uuid, text)', svc), format('%I.changed_message(uuid, text, text)', svc),
			format('%I.mark_read(bigint, text, bigint)', svc), format('%I.inbox_apply()', svc)];
		IF ext IS NOT NULL AND NOT seed THEN
			FOREACH fn IN ARRAY fns LOOP
				IF pg_catalog.to_regprocedure(fn) IS NOT NULL THEN
					EXECUTE format('ALTER EXTENSION chat_outbox ADD FUNCTION %s', fn);
				END IF;
			END LOOP;
		END IF;
		-- publish_event returns the outbox's row type, which goes with the table: it is made again
		-- below, with its owner and the roles it was granted to
		SELECT p.proowner, p.proacl INTO old_owner, old_acl FROM pg_catalog.pg_proc p
			WHERE p.oid = pg_catalog.to_regprocedure(format('%I.publish_event(text, jsonb)', svc));
		IF ext IS NOT NULL AND NOT seed THEN
			EXECUTE format('ALTER EXTENSION chat_outbox ADD FUNCTION %I.publish_event(text, jsonb)', svc);
		END IF;
		EXECUTE format('DROP FUNCTION %I.publish_event(text, jsonb)', svc);
		EXECUTE format('ALTER TABLE %I.outbox RENAME TO outbox_1_1', svc);
		EXECUTE format('ALTER SEQUENCE %I.outbox_id_seq RENAME TO outbox_1_1_id_seq', svc);
		PERFORM chat_outbox.create_outbox(svc);
		EXECUTE format('SELECT coalesce(max(id), 0) FROM %I.outbox_1_1', svc) INTO top;
		-- ids carry on above the old ones (a row's id is its fallback jobId)
		PERFORM pg_catalog.setval(format('%I.outbox_id_seq', svc), greatest(top, 1), top > 0);
		EXECUTE format('INSERT INTO %1$I.outbox_events (id, gen, chat_id, event, payload, created_at)
			SELECT o.id, 0, chat_outbox.chat_id_of(o.payload), o.event, o.payload, o.created_at FROM %1$I.outbox_1_1 o
			WHERE o.sent_at IS NULL ORDER BY o.id', svc);
		EXECUTE format('INSERT INTO %1$I.outbox_refused (id, gen, reason)
			SELECT o.id, 0, o.refused FROM %1$I.outbox_1_1 o WHERE o.sent_at IS NULL AND o.refused IS NOT NULL', svc);
		EXECUTE format('DROP TABLE %I.outbox_1_1', svc);
		PERFORM chat_outbox.define_service_functions(svc);
		fn := format('%I.publish_event(text, jsonb)', svc);
		IF old_owner IS NOT NULL THEN
			IF old_owner <> (SELECT p.proowner FROM pg_catalog.pg_proc p WHERE p.oid = pg_catalog.to_regprocedure(fn)) THEN
				EXECUTE format('ALTER FUNCTION %s OWNER TO %s', fn, old_owner::regrole::text);
			END IF;
			FOR a IN SELECT x.grantee, x.is_grantable FROM pg_catalog.aclexplode(old_acl) x
				WHERE x.privilege_type = 'EXECUTE' AND x.grantee <> old_owner
			LOOP
				EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s%s', fn,
					CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END,
					CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
			END LOOP;
		END IF;
		-- whoever could read the outbox table reads the view
		FOR a IN SELECT DISTINCT x.grantee FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) x
			WHERE c.oid = format('%I.messages', svc)::regclass AND x.privilege_type = 'SELECT' AND x.grantee <> c.relowner
		LOOP
			EXECUTE format('GRANT SELECT ON %I.outbox TO %s', svc, CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END);
		END LOOP;
		IF ext IS NOT NULL AND NOT seed THEN
			FOR o IN SELECT (pg_catalog.pg_identify_object(d.classid, d.objid, d.objsubid)).*
				FROM pg_catalog.pg_depend d
				WHERE d.refobjid = ext AND d.deptype = 'e'
			LOOP
				IF o.schema = svc THEN
					EXECUTE format('ALTER EXTENSION chat_outbox DROP %s %s', o.type, o.identity);
				END IF;
			END LOOP;
		END IF;
	END LOOP;
END
$update$;
