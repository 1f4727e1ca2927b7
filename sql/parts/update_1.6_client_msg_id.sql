-- The update to 1.6's client message ids (send_message's client_msg_id: docs/client-protocol.md,
-- 'Client message ids'), after sql/parts/update_1.6.sql: each service gets its client_msg_ids table
-- (chat_outbox.create_client_msg_ids) and send_message its fourth argument. send_message(bigint,
-- text, text) is dropped and send_message(bigint, text, text, text) given every grant the old one
-- had (one function, not an overload: a call with two or three arguments is the same call as
-- before, and resolves to the new function once this commits). Under traffic: nothing here locks a
-- table a sender writes (a new table, functions replaced), so sends in flight finish with the old
-- function and the next ones take the new one. Idempotent: a service without the old function is
-- left as it is.
DO $client_msg_id$
DECLARE
	svc text;
	old regprocedure;
	acl aclitem[];
	owner oid;
	g record;
BEGIN
	FOR svc IN SELECT s.name FROM chat_outbox.services s ORDER BY s.name LOOP
		old := pg_catalog.to_regprocedure(format('%I.send_message(bigint, text, text)', svc));
		IF old IS NULL THEN
			CONTINUE;
		END IF;
		SELECT p.proacl, p.proowner INTO acl, owner FROM pg_catalog.pg_proc p WHERE p.oid = old;
		PERFORM chat_outbox.update_service(svc, $ddl$
			SELECT chat_outbox.create_client_msg_ids(%1$L);
			DROP FUNCTION %1$I.send_message(bigint, text, text);
		$ddl$);
		FOR g IN SELECT DISTINCT a.grantee FROM pg_catalog.aclexplode(acl) a
			WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> 0 AND a.grantee <> owner
		LOOP
			EXECUTE format('GRANT EXECUTE ON FUNCTION %I.send_message(bigint, text, text, text) TO %s', svc, g.grantee::regrole);
		END LOOP;
	END LOOP;
END
$client_msg_id$;
