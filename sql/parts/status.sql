-- unsent counts the rows waiting to be relayed; refused ones (kept unsent, skipped) are counted apart
CREATE FUNCTION chat_outbox.outbox_backlog(service text, OUT unsent bigint, OUT oldest_unsent_age interval,
	OUT refused bigint, OUT refused_reason text)
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
AS $backlog$
BEGIN
	EXECUTE format('SELECT count(*) FILTER (WHERE refused IS NULL), now() - min(created_at) FILTER (WHERE refused IS NULL),
		count(*) FILTER (WHERE refused IS NOT NULL), (array_agg(refused ORDER BY id) FILTER (WHERE refused IS NOT NULL))[1]
		FROM %I.outbox WHERE sent_at IS NULL', service)
		INTO unsent, oldest_unsent_age, refused, refused_reason;
EXCEPTION WHEN undefined_table OR invalid_schema_name THEN
	-- a service whose outbox is gone: its row shows NULLs (and the relay's service_error), the view still works
	unsent := NULL;
END
$backlog$;

-- The backlog per partition (chat_partition): one row for each of the service's partitions, empty ones too.
CREATE FUNCTION chat_outbox.partition_backlog(service text, partitions int, OUT partition int, OUT unsent bigint,
	OUT oldest_unsent_age interval)
	RETURNS SETOF record
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
AS $backlog$
BEGIN
	RETURN QUERY EXECUTE format('SELECT p.p, coalesce(b.unsent, 0), b.age FROM generate_series(0, $1 - 1) p(p)
		LEFT JOIN (SELECT chat_outbox.chat_partition(payload, $1) AS p, count(*) AS unsent, now() - min(created_at) AS age
			FROM %I.outbox WHERE sent_at IS NULL AND refused IS NULL GROUP BY 1) b ON b.p = p.p ORDER BY 1', service)
		USING partitions;
EXCEPTION WHEN undefined_table OR invalid_schema_name THEN
	RETURN; -- a service whose outbox is gone: no rows here, the status view shows why
END
$backlog$;

CREATE VIEW chat_outbox.status AS
	SELECT s.name AS service,
		s.queue,
		b.unsent,
		b.oldest_unsent_age,
		r.last_relayed_id,
		r.last_relayed_at,
		w.state AS relay_state,
		w.last_error,
		w.last_error_at,
		w.pid AS worker_pid,
		w.redis_warning,
		b.refused,
		b.refused_reason,
		r.service_error,
		w.redis_appendfsync,
		s.partitions,
		r.layout,
		r.layout_change
	FROM chat_outbox.services s
	CROSS JOIN LATERAL chat_outbox.outbox_backlog(s.name) b
	CROSS JOIN chat_outbox.relay_worker_status() w
	LEFT JOIN chat_outbox.relay_service_status() r ON r.service = s.name;
COMMENT ON VIEW chat_outbox.status IS 'Per outbox: backlog, last relayed id and time, the relay worker''s state, the partition count asked for and the one relayed under.';

-- Per partition of every service: its queue and Redis shard (the rules of common/partitions.hpp:
-- <queue> alone with one partition, else <queue>-p<partition>; shard = partition mod shards), its
-- backlog and lag. Which consumer works a partition is the daemons' to show (leases in Redis), not this view's.
CREATE VIEW chat_outbox.partition_status AS
	SELECT s.name AS service,
		b.partition,
		CASE WHEN s.partitions = 1 THEN s.queue ELSE s.queue || '-p' || b.partition END AS queue,
		b.partition % nullif(sh.shards, 0) AS shard,
		r.redis,
		b.unsent,
		b.oldest_unsent_age
	FROM chat_outbox.services s
	CROSS JOIN LATERAL chat_outbox.partition_backlog(s.name, s.partitions) b
	CROSS JOIN (SELECT count(*)::int AS shards FROM chat_outbox.relay_redis_shards()) sh
	LEFT JOIN chat_outbox.relay_redis_shards() r ON r.shard = b.partition % nullif(sh.shards, 0);
COMMENT ON VIEW chat_outbox.partition_status IS 'Per partition of each service: queue, Redis shard, unsent rows and the oldest one''s age.';
