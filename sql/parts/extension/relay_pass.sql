-- One relay pass from SQL (the worker's code path), for tests and manual draining.
CREATE FUNCTION chat_outbox.relay_pass(service text) RETURNS bigint[]
	LANGUAGE c STRICT AS 'MODULE_PATHNAME', 'chat_outbox_relay_pass';
REVOKE ALL ON FUNCTION chat_outbox.relay_pass(text) FROM PUBLIC;
