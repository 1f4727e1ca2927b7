-- The tables made by the update to 1.3 belong to the extension: pg_dump keeps their rows with the
-- inbox's, whose changes they name.
SELECT pg_catalog.pg_extension_config_dump('consumers.inbox_waiting', '');
SELECT pg_catalog.pg_extension_config_dump('workers.inbox_waiting', '');
