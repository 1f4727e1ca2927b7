-- The update from 1.2 to 1.3 of every existing service: a plain message's inbox insert runs no trigger
-- function while no change waits for its message (inbox_waiting; define_service_functions). Runs
-- after the shared functions are in place; the extension's chat_outbox--1.2--1.3.sql and the managed
-- install's update_1.3.sql are this text, after every sql/parts/update_1.3*.sql before it in name
-- order (sql/managed/generate.py). In one transaction, while receivers go on writing: each service's
-- inbox is locked against writes first (a write in flight commits before, one that comes after waits
-- and then runs the new triggers), so the changes found waiting are all there are; its waiting table is
-- made and filled, and its functions and triggers replaced. Readers of the inbox do not wait.
-- Idempotent: a service that has its waiting table already is left as it is.
DO $update$
DECLARE
	ext oid := (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'chat_outbox');
	svc text;
	seed boolean;
	fn text;
	o record;
BEGIN
	FOR svc IN SELECT s.name FROM chat_outbox.services s ORDER BY s.name LOOP
		IF pg_catalog.to_regclass(format('%I.inbox_waiting', svc)) IS NOT NULL THEN
			CONTINUE;
		END IF;
		EXECUTE format('LOCK TABLE %I.inbox IN SHARE ROW EXCLUSIVE MODE', svc);
		-- a service of CREATE EXTENSION belongs to the extension; one made later stays outside it: its
		-- functions are lent to the extension for CREATE OR REPLACE and everything of it taken back after
		seed := ext IS NOT NULL AND EXISTS (SELECT FROM pg_catalog.pg_depend d
			WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = format('%I.messages', svc)::regclass
				AND d.refobjid = ext AND d.deptype = 'e');
		IF ext IS NOT NULL AND NOT seed THEN
			FOREACH fn IN ARRAY ARRAY[format('%I.send_message(bigint, text, text)', svc), format('%I.edit_message(uuid, text, text)', svc),
				format('%I.delete_message(uuid, text)', svc), format('%I.changed_message(uuid, text, text)', svc),
				format('%I.mark_read(bigint, text, bigint)', svc), format('%I.publish_event(text, jsonb)', svc),
				format('%I.inbox_apply()', svc)]
			LOOP
				IF pg_catalog.to_regprocedure(fn) IS NOT NULL THEN
					EXECUTE format('ALTER EXTENSION chat_outbox ADD FUNCTION %s', fn);
				END IF;
			END LOOP;
		END IF;
		PERFORM chat_outbox.create_inbox_waiting(svc);
		PERFORM chat_outbox.define_service_functions(svc);
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
