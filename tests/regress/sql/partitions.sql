-- partitions: a service's partition count, its checks, and chat_partition(), the SQL statement of
-- the rule the relay places rows by (common/partitions.hpp; the same cases as its unit test).
CREATE EXTENSION chat_outbox;
\set SHOW_CONTEXT never
SELECT name, queue, partitions FROM chat_outbox.services ORDER BY name;
SELECT chat_outbox.create_service('parted', queue => 'parted-q', partitions => 4);
SELECT partitions FROM chat_outbox.services WHERE name = 'parted';
-- out of range: refused, nothing created
SELECT chat_outbox.create_service('zero', partitions => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.create_service('many', partitions => 257);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM pg_namespace WHERE nspname IN ('zero', 'many');
-- a live change, checked
SELECT chat_outbox.set_partitions('parted', 2);
SELECT partitions FROM chat_outbox.services WHERE name = 'parted';
SELECT chat_outbox.set_partitions('parted', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.set_partitions('nope', 2);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
UPDATE chat_outbox.services SET partitions = 300 WHERE name = 'parted';
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- chat_id mod n taken non-negative; partition 0 without an integer chat_id that fits a bigint
SELECT c AS payload, chat_outbox.chat_partition(c::jsonb, 4) AS "p of 4"
FROM unnest(ARRAY['{"chat_id": 42}', '{"chat_id": 0}', '{"chat_id": -1}', '{"chat_id": -4}', '{"chat_id": -5}',
	'{"chat_id": 9223372036854775807}', '{"chat_id": -9223372036854775808}', '{"chat_id": 9223372036854775808}',
	'{"chat_id": 42.0}', '{"chat_id": "42"}', '{"chat_id": null}', '{}']) c;
SELECT chat_outbox.chat_partition('{"chat_id": 9223372036854775807}', 256) AS "max of 256",
	chat_outbox.chat_partition('{"chat_id": -9223372036854775808}', 3) AS "min of 3",
	chat_outbox.chat_partition('{"chat_id": 7}', 1) AS "7 of 1";
-- the status views name the count and each partition's queue
SELECT service, partitions FROM chat_outbox.status WHERE service = 'parted';
SELECT service, partition, queue, unsent FROM chat_outbox.partition_status WHERE service = 'parted';
SELECT (parted.send_message(5, 'x')).id IS NOT NULL AS sent;
SELECT partition, unsent FROM chat_outbox.partition_status WHERE service = 'parted';
DROP EXTENSION chat_outbox CASCADE;
