-- CREATE OR REPLACE: the in-place switches between the modes run this same text over the other
-- mode's functions (sql/managed/generate.py).

CREATE OR REPLACE FUNCTION chat_outbox.relay_worker_status(
	OUT state text, OUT pid int, OUT last_error text, OUT last_error_at timestamptz, OUT redis_warning text,
	OUT redis_appendfsync text)
	LANGUAGE c AS 'MODULE_PATHNAME', 'chat_outbox_relay_worker_status';

CREATE OR REPLACE FUNCTION chat_outbox.relay_service_status(
	OUT service text, OUT last_relayed_id bigint, OUT last_relayed_at timestamptz, OUT relayed_total bigint,
	OUT service_error text, OUT layout int, OUT layout_change text)
	RETURNS SETOF record
	LANGUAGE c AS 'MODULE_PATHNAME', 'chat_outbox_relay_service_status';

-- The relay's Redis shards in order (chat_outbox.redis_url), each without its password.
CREATE OR REPLACE FUNCTION chat_outbox.relay_redis_shards(OUT shard int, OUT redis text)
	RETURNS SETOF record
	LANGUAGE c AS 'MODULE_PATHNAME', 'chat_outbox_relay_redis_shards';

