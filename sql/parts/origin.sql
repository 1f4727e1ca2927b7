-- Where an outbox's transaction ids come from (docs/architecture.md, 'The write-once outbox', M1-M3):
-- the name of this database that chat_outbox.outbox_origins and the cursors record. Before the tables
-- (their defaults use it); CREATE OR REPLACE: the update to 1.6 runs this same text first.

-- The database this session is in, as outbox_origins names it: the cluster's system_identifier and
-- the database's oid. A physical replica or a promoted standby has its primary's; a restore, a
-- logical replica or a database made from a template has its own. Where the role may not run
-- pg_control_system() (a managed service may revoke it), the cluster is 'unknown': only the
-- database's oid tells databases apart then (docs/deploy.md, Moving a database).
CREATE OR REPLACE FUNCTION chat_outbox.this_database() RETURNS text
	LANGUAGE sql STABLE PARALLEL SAFE
RETURN (SELECT pg_catalog.format('%s/%s',
		CASE WHEN pg_catalog.has_function_privilege('pg_catalog.pg_control_system()', 'EXECUTE')
			THEN (pg_catalog.pg_control_system()).system_identifier::text ELSE 'unknown' END, d.oid)
	FROM pg_catalog.pg_database d WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database());
