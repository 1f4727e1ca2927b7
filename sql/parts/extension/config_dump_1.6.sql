-- What the update to 1.6 makes pg_dump keep too, so that a dump restored elsewhere is rebased, not
-- lost (chat_outbox.rebase_outbox): the cursors (what was sent, in the old cluster's xids), every
-- rotation row (CREATE EXTENSION makes none since 1.6, so a restore's rows meet none), the outboxes'
-- origins, and the seed services' generation sequences.
SELECT pg_catalog.pg_extension_config_dump('chat_outbox.outbox_cursors', '');
SELECT pg_catalog.pg_extension_config_dump('chat_outbox.outbox_rotation', '');
SELECT pg_catalog.pg_extension_config_dump('chat_outbox.outbox_origins', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.outbox_generation', '');
SELECT pg_catalog.pg_extension_config_dump('workers.outbox_generation', '');
-- The seed services' client message ids (sql/parts/update_1.6_client_msg_id.sql): a restored
-- database answers a repeated send with the message it stored, as the dumped one would.
SELECT pg_catalog.pg_extension_config_dump('consumers.client_msg_ids', '');
SELECT pg_catalog.pg_extension_config_dump('workers.client_msg_ids', '');
