#!/usr/bin/env bash
# consumer.search_path: functions and operators a role defines in a schema ahead of pg_catalog in the
# search path, under the names the consumer's SQL uses, are never called by the consumer's statements.
# Each hostile object records its call (with the caller's application_name) and then does what the
# pg_catalog one does, so only the record tells that it ran.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env daemon-search-path
Q=t-search-path

harness_psql "
CREATE SCHEMA evil;
CREATE TABLE evil.calls (fn text, app text);
CREATE FUNCTION evil.note(fn text) RETURNS void LANGUAGE sql AS
  \$\$ INSERT INTO evil.calls VALUES (fn, pg_catalog.current_setting('application_name')) \$\$;
CREATE FUNCTION evil.to_json(t timestamptz) RETURNS json LANGUAGE plpgsql AS
  \$\$ BEGIN PERFORM evil.note('to_json'); RETURN pg_catalog.to_json(t); END \$\$;
CREATE FUNCTION evil.hashtext(t text) RETURNS int LANGUAGE plpgsql AS
  \$\$ BEGIN PERFORM evil.note('hashtext'); RETURN pg_catalog.hashtext(t); END \$\$;
CREATE FUNCTION evil.pg_advisory_xact_lock(k int) RETURNS void LANGUAGE plpgsql AS
  \$\$ BEGIN PERFORM evil.note('pg_advisory_xact_lock'); PERFORM pg_catalog.pg_advisory_xact_lock(k::bigint); END \$\$;
CREATE FUNCTION evil.unnest(a uuid[]) RETURNS SETOF uuid LANGUAGE plpgsql AS
  \$\$ BEGIN PERFORM evil.note('unnest'); RETURN QUERY SELECT * FROM pg_catalog.unnest(a); END \$\$;
CREATE FUNCTION evil.max_seq(s bigint, v bigint) RETURNS bigint LANGUAGE plpgsql AS
  \$\$ BEGIN PERFORM evil.note('max'); RETURN GREATEST(s, v); END \$\$;
CREATE AGGREGATE evil.max(bigint) (sfunc = evil.max_seq, stype = bigint);
CREATE FUNCTION evil.json_path(j json, p text[]) RETURNS text LANGUAGE plpgsql AS
  \$\$ BEGIN PERFORM evil.note('#>>'); RETURN j OPERATOR(pg_catalog.#>>) p; END \$\$;
CREATE OPERATOR evil.#>> (leftarg = json, rightarg = text[], function = evil.json_path);
CREATE FUNCTION evil.uuid_eq(a uuid, b uuid) RETURNS boolean LANGUAGE plpgsql AS
  \$\$ BEGIN PERFORM evil.note('='); RETURN a OPERATOR(pg_catalog.=) b; END \$\$;
CREATE OPERATOR evil.= (leftarg = uuid, rightarg = uuid, function = evil.uuid_eq);
CREATE FUNCTION evil.int8_gt(a bigint, b bigint) RETURNS boolean LANGUAGE plpgsql AS
  \$\$ BEGIN PERFORM evil.note('>'); RETURN a OPERATOR(pg_catalog.>) b; END \$\$;
CREATE OPERATOR evil.> (leftarg = bigint, rightarg = bigint, function = evil.int8_gt);
ALTER ROLE CURRENT_USER SET search_path = evil, pg_catalog, public;"

peer add $Q 5 7 >"$H_DIR/ids.txt"
daemon_start daemon.log --service workers --queue $Q
daemon_wait_consuming daemon.log
wait_inbox workers 5
wait_counts $Q "c.completed === 5" 20 >/dev/null
peer add $Q 1 7 >>"$H_DIR/ids.txt" # a write with rows already pushed below it
wait_inbox workers 6
harness_psql "SELECT message_id FROM workers.inbox ORDER BY seq" >"$H_DIR/seq.txt"
expect_eq "inbox rows in queue order" "" "$(diff "$H_DIR/ids.txt" "$H_DIR/seq.txt" | head -3)"
# the test's own queries ran with the hostile search path too: it was in effect
expect_eq "hostile objects reachable" t "$(harness_psql "SELECT count(*) > 0 FROM (SELECT evil.note('probe')) x")"
called=$(harness_psql "SELECT coalesce(string_agg(DISTINCT fn, ' '), '') FROM evil.calls WHERE app LIKE '% inbox'")
expect_eq "hostile objects called by the consumer's statements" "" "$called"
echo "PASS"
