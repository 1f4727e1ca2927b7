-- CREATE OR REPLACE: the in-place switches between the modes run this same text over the other
-- mode's functions (sql/managed/generate.py).

CREATE OR REPLACE FUNCTION chat_outbox.relay_worker_status(
	OUT state text, OUT pid int, OUT last_error text, OUT last_error_at timestamptz, OUT redis_warning text,
	OUT redis_appendfsync text)
	LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
AS $status$
	-- the relay heard from last; a relay silent for 10 s (or none at all) is stopped
	SELECT CASE WHEN r.heartbeat_at > now() - interval '10 s' THEN r.state ELSE 'stopped' END,
		r.pid, r.last_error, r.last_error_at, r.redis_warning, r.redis_appendfsync
	FROM (SELECT NULL) one
	LEFT JOIN LATERAL (SELECT * FROM chat_outbox.relays ORDER BY heartbeat_at DESC LIMIT 1) r ON true
$status$;

CREATE OR REPLACE FUNCTION chat_outbox.relay_service_status(
	OUT service text, OUT last_relayed_id bigint, OUT last_relayed_at timestamptz, OUT relayed_total bigint,
	OUT service_error text, OUT layout int, OUT layout_change text)
	RETURNS SETOF record
	LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
AS $status$
	SELECT service, last_relayed_id, last_relayed_at, relayed_total, service_error, layout, layout_change
	FROM chat_outbox.relay_progress
$status$;

-- The relay's Redis shards in order (its --redis-url list), each without its password.
CREATE OR REPLACE FUNCTION chat_outbox.relay_redis_shards(OUT shard int, OUT redis text)
	RETURNS SETOF record
	LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
AS $shards$
	-- the shards of the relay heard from last
	SELECT (t.i - 1)::int, t.u
	FROM (SELECT redis_shards FROM chat_outbox.relays ORDER BY heartbeat_at DESC LIMIT 1) r,
		unnest(r.redis_shards) WITH ORDINALITY AS t(u, i)
$shards$;
