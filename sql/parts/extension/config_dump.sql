-- Created by this script, these tables belong to the extension, and pg_dump skips the data of
-- extension tables unless told otherwise. (Services created later are ordinary tables.)
SELECT pg_catalog.pg_extension_config_dump('chat_outbox.services', 'WHERE name NOT IN (''consumers'', ''workers'')');
SELECT pg_catalog.pg_extension_config_dump('chat_outbox.members', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.messages', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.inbox', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.read_cursors', '');
SELECT pg_catalog.pg_extension_config_dump('consumers.inbox_seq_seq', '');
SELECT pg_catalog.pg_extension_config_dump('workers.messages', '');
SELECT pg_catalog.pg_extension_config_dump('workers.inbox', '');
SELECT pg_catalog.pg_extension_config_dump('workers.read_cursors', '');
SELECT pg_catalog.pg_extension_config_dump('workers.inbox_seq_seq', '');
