-- The tables made by the update to 1.2 belong to the extension: pg_dump keeps their rows, not the
-- cursors' (their snapshots name transactions of this cluster only). The rows' xids are this
-- cluster's too: restored elsewhere, a row whose xid the new cluster has not reached yet is not
-- visible to its relay's ticks until it has; move unsent rows with sql/managed/copy_services.sh.
SELECT pg_catalog.pg_extension_config_dump('chat_outbox.outbox_rotation', 'WHERE service NOT IN (''consumers'', ''workers'')');
SELECT pg_catalog.pg_extension_config_dump('consumers.outbox_events_0', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.outbox_events_1', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.outbox_events_2', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.outbox_refused', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.outbox_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('workers.outbox_events_0', '');
SELECT pg_catalog.pg_extension_config_dump('workers.outbox_events_1', '');
SELECT pg_catalog.pg_extension_config_dump('workers.outbox_events_2', '');
SELECT pg_catalog.pg_extension_config_dump('workers.outbox_refused', '');
SELECT pg_catalog.pg_extension_config_dump('workers.outbox_id_seq', '');
