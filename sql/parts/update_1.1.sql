-- The update from 1.0 to 1.1 of every existing service: the sender columns, the new send_message
-- (one function with sender DEFAULT NULL, so two-argument calls keep working), mark_read with
-- the shared user id rule, and edits and deletes: their columns, edit_message and delete_message
-- (granted to whoever may call send_message) and the inbox's inbox_apply trigger, and membership's grants
-- (chat_outbox.members and add_member/remove_member come first, sql/parts/members.sql). Runs after the new shared functions (services.sql) are in place; the
-- extension's chat_outbox--1.0--1.1.sql and the managed install's update_1.1.sql are this text
-- (sql/managed/generate.py). Idempotent: a service that has the columns and the function already
-- (created by 1.1, or taken over from a 1.1 managed install) is left as it is.
DO $update$
DECLARE
	ext oid := (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'chat_outbox');
	svc text;
	old regprocedure;
	old_owner oid;
	old_acl aclitem[];
	fn text;
	a record;
	-- Inside ALTER EXTENSION UPDATE, CREATE OR REPLACE refuses a function the extension does not own
	-- (PostgreSQL's rule since CVE-2022-2625) and a new function becomes the extension's: the functions
	-- of a service created after CREATE EXTENSION are lent to it for the update and taken back after.
	lent boolean;
	fns text[];
BEGIN
	FOR svc IN SELECT s.name FROM chat_outbox.services s ORDER BY s.name LOOP
		EXECUTE format('ALTER TABLE %I.messages ADD COLUMN IF NOT EXISTS sender text', svc);
		EXECUTE format('ALTER TABLE %I.inbox ADD COLUMN IF NOT EXISTS sender text', svc);
		EXECUTE format('ALTER TABLE %I.messages ADD COLUMN IF NOT EXISTS edited_at timestamptz, '
			'ADD COLUMN IF NOT EXISTS deleted_at timestamptz, ADD COLUMN IF NOT EXISTS version int NOT NULL DEFAULT 0', svc);
		EXECUTE format('ALTER TABLE %I.inbox ADD COLUMN IF NOT EXISTS target uuid, '
			'ADD COLUMN IF NOT EXISTS kind text CHECK (kind IN (''edited'', ''deleted'')), '
			'ADD COLUMN IF NOT EXISTS version int NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS edited_at timestamptz, '
			'ADD COLUMN IF NOT EXISTS deleted_at timestamptz', svc);
		EXECUTE format('CREATE INDEX IF NOT EXISTS inbox_target ON %I.inbox (target) WHERE target IS NOT NULL', svc);
		-- a role that stores received rows (grant_service's receiver) stores their sender too (regrole
		-- prints a role's name quoted as needed)
		FOR a IN SELECT DISTINCT x.grantee FROM pg_catalog.pg_attribute t, pg_catalog.aclexplode(t.attacl) x
			WHERE t.attrelid = format('%I.inbox', svc)::regclass AND t.attname = 'message_id' AND x.privilege_type = 'INSERT'
		LOOP
			EXECUTE format('GRANT INSERT (sender, target, kind, version, edited_at, deleted_at) ON %I.inbox TO %s', svc,
				CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END);
		END LOOP;

		fns := ARRAY[format('%I.publish_event(text, jsonb)', svc), format('%I.mark_read(bigint, text, bigint)', svc),
			format('%I.send_message(bigint, text, text)', svc), format('%I.edit_message(uuid, text, text)', svc),
			format('%I.delete_message(uuid, text)', svc), format('%I.changed_message(uuid, text, text)', svc),
			format('%I.inbox_apply()', svc)];
		lent := ext IS NOT NULL AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend d
			WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = to_regprocedure(fns[1])
				AND d.refobjid = ext AND d.deptype = 'e');
		IF lent THEN
			FOREACH fn IN ARRAY fns LOOP
				IF to_regprocedure(fn) IS NOT NULL THEN
					EXECUTE format('ALTER EXTENSION chat_outbox ADD FUNCTION %s', fn);
				END IF;
			END LOOP;
		END IF;

		-- send_message(bigint, text) gives way to send_message(bigint, text, text): its owner and the
		-- roles that may call it (grant_service) carry over
		old := to_regprocedure(format('%I.send_message(bigint, text)', svc));
		IF old IS NOT NULL THEN
			SELECT p.proowner, p.proacl INTO old_owner, old_acl FROM pg_catalog.pg_proc p WHERE p.oid = old;
			EXECUTE format('DROP FUNCTION %s', old);
		END IF;
		PERFORM chat_outbox.define_service_functions(svc);
		IF old IS NOT NULL THEN
			IF old_owner <> (SELECT p.proowner FROM pg_catalog.pg_proc p WHERE p.oid = to_regprocedure(fns[3])) THEN
				EXECUTE format('ALTER FUNCTION %s OWNER TO %s', fns[3], old_owner::regrole::text);
			END IF;
			FOR a IN SELECT x.grantee, x.is_grantable FROM pg_catalog.aclexplode(old_acl) x
				WHERE x.privilege_type = 'EXECUTE' AND x.grantee <> old_owner
			LOOP
				EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s%s', fns[3],
					CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END,
					CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
			END LOOP;
		END IF;

		-- whoever may call send_message may edit and delete (grant_service gives all three)
		FOR a IN SELECT x.grantee, x.is_grantable FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) x
			WHERE p.oid = to_regprocedure(fns[3]) AND x.privilege_type = 'EXECUTE' AND x.grantee <> p.proowner
		LOOP
			EXECUTE format('GRANT EXECUTE ON FUNCTION %s, %s TO %s%s', fns[4], fns[5],
				CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END,
				CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
		END LOOP;

		-- membership (sql/parts/members.sql), as grant_service gives it now: a receiver (INSERT on the
		-- inbox) reads chat_outbox.members, an application role (send_message, no inbox INSERT) also
		-- changes it
		FOR a IN SELECT DISTINCT x.grantee, EXISTS (SELECT FROM pg_catalog.pg_attribute t, pg_catalog.aclexplode(t.attacl) y
				WHERE t.attrelid = format('%I.inbox', svc)::regclass AND t.attname = 'message_id'
					AND y.privilege_type = 'INSERT' AND y.grantee = x.grantee) AS receiver
			FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) x
			WHERE p.oid = to_regprocedure(fns[3]) AND x.privilege_type = 'EXECUTE' AND x.grantee <> p.proowner AND x.grantee <> 0
		LOOP
			EXECUTE format('GRANT USAGE ON SCHEMA chat_outbox TO %s', a.grantee::regrole::text);
			IF a.receiver THEN
				EXECUTE format('GRANT SELECT ON chat_outbox.members TO %s', a.grantee::regrole::text);
				EXECUTE format('GRANT EXECUTE ON FUNCTION chat_outbox.check_member(bigint, text) TO %s', a.grantee::regrole::text);
			ELSE
				EXECUTE format('GRANT EXECUTE ON FUNCTION chat_outbox.add_member(bigint, text), chat_outbox.remove_member(bigint, text) TO %s',
					a.grantee::regrole::text);
				EXECUTE format('GRANT SELECT, INSERT, DELETE ON chat_outbox.members TO %s', a.grantee::regrole::text);
			END IF;
		END LOOP;

		IF lent THEN
			FOREACH fn IN ARRAY fns LOOP
				EXECUTE format('ALTER EXTENSION chat_outbox DROP FUNCTION %s', fn);
			END LOOP;
		END IF;
	END LOOP;
END
$update$;
