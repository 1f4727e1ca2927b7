-- The rows of a service's outbox the relay has not sent and Redis has not refused, read through
-- the outbox view (the unsent flag is the cursors'), looking only where they can be: above the
-- lowest id the cursors' finished ticks read (done_mpre), or written by a transaction those ticks saw
-- running or did not know yet (sql/parts/outbox.sql says why). Columns: id, chat_id, created_at.
CREATE OR REPLACE FUNCTION chat_outbox.outbox_unsent_sql(service text) RETURNS text
	LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
RETURN format('SELECT o.id, o.chat_id, o.created_at FROM %I.outbox o WHERE o.sent_at IS NULL AND o.refused IS NULL
		AND (o.id > $1 OR o.xid = ANY ($2) OR o.xid >= $3)', service);

-- The bounds outbox_unsent_sql takes ($1, $2, $3) for a service: the cursors' lowest done_mpre (the
-- lowest bigint without cursors: every row), the xids their finished ticks saw running, and the
-- lowest xmax of those ticks.
CREATE OR REPLACE FUNCTION chat_outbox.outbox_unsent_bounds(service text, OUT above bigint, OUT xids xid8[], OUT xmax xid8)
	LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
AS $bounds$
	SELECT coalesce(min(c.done_mpre), -9223372036854775808),
		coalesce((SELECT array_agg(DISTINCT x) FROM chat_outbox.outbox_cursors d, pg_snapshot_xip(d.done_snap) x
			WHERE d.service = outbox_unsent_bounds.service), '{}'),
		coalesce(min(pg_snapshot_xmax(c.done_snap)), '0')
	FROM chat_outbox.outbox_cursors c WHERE c.service = outbox_unsent_bounds.service
$bounds$;

-- unsent counts the rows waiting to be relayed; refused ones (kept unsent, skipped) are counted apart
CREATE OR REPLACE FUNCTION chat_outbox.outbox_backlog(service text, OUT unsent bigint, OUT oldest_unsent_age interval,
	OUT refused bigint, OUT refused_reason text)
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
AS $backlog$
DECLARE
	b record;
BEGIN
	b := chat_outbox.outbox_unsent_bounds(service);
	EXECUTE format('SELECT count(*), now() - min(u.created_at) FROM (%s) u', chat_outbox.outbox_unsent_sql(service))
		INTO unsent, oldest_unsent_age USING b.above, b.xids, b.xmax;
	EXECUTE format('SELECT count(*), (array_agg(reason ORDER BY id))[1] FROM %I.outbox_refused', service)
		INTO refused, refused_reason;
EXCEPTION WHEN undefined_table OR invalid_schema_name THEN
	-- a service whose outbox is gone: its row shows NULLs (and the relay's service_error), the view still works
	unsent := NULL;
END
$backlog$;

-- The backlog per partition (partition_of): one row for each of the service's partitions, empty ones too.
CREATE OR REPLACE FUNCTION chat_outbox.partition_backlog(service text, partitions int, OUT partition int, OUT unsent bigint,
	OUT oldest_unsent_age interval)
	RETURNS SETOF record
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
AS $backlog$
DECLARE
	b record;
BEGIN
	b := chat_outbox.outbox_unsent_bounds(service);
	RETURN QUERY EXECUTE format('SELECT p.p, coalesce(b.unsent, 0), b.age FROM generate_series(0, $4 - 1) p(p)
		LEFT JOIN (SELECT chat_outbox.partition_of(u.chat_id, $4) AS p, count(*) AS unsent, now() - min(u.created_at) AS age
			FROM (%s) u GROUP BY 1) b ON b.p = p.p ORDER BY 1', chat_outbox.outbox_unsent_sql(service))
		USING b.above, b.xids, b.xmax, partitions;
EXCEPTION WHEN undefined_table OR invalid_schema_name THEN
	RETURN; -- a service whose outbox is gone: no rows here, the status view shows why
END
$backlog$;

-- The relay's state for one service, from the relay's (worker_state: relay_worker_status().state) and
-- the service's (relay_service_status()): a relay that cannot relay a service is not `running` for it.
-- The status view's service_state, and the daemons' /metrics (chat_outbox_relay_service_state).
CREATE OR REPLACE FUNCTION chat_outbox.service_state(worker_state text, service_error text, layout_change text) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN worker_state IS DISTINCT FROM 'running' THEN worker_state
	WHEN service_error IS NOT NULL THEN 'failing'
	WHEN layout_change IS NOT NULL THEN 'waiting for the layout'
	ELSE 'running' END;

CREATE OR REPLACE VIEW chat_outbox.status AS
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
		r.layout_change,
		g.waiting AS rotation_wait,
		chat_outbox.service_state(w.state, r.service_error, r.layout_change) AS service_state
	FROM chat_outbox.services s
	CROSS JOIN LATERAL chat_outbox.outbox_backlog(s.name) b
	LEFT JOIN chat_outbox.outbox_rotation g ON g.service = s.name
	CROSS JOIN chat_outbox.relay_worker_status() w
	LEFT JOIN chat_outbox.relay_service_status() r ON r.service = s.name;
COMMENT ON VIEW chat_outbox.status IS 'Per outbox: backlog, last relayed id and time, the relay worker''s state and the relay''s for this service, the partition count asked for and the one relayed under, what the rotation of its outbox waits for.';

-- Per partition of every service: its queue and Redis shard (the rules of common/partitions.hpp:
-- <queue> alone with one partition, else <queue>-p<partition>; shard = partition mod shards), its
-- backlog and lag. Which consumer works a partition is the daemons' to show (leases in Redis), not this view's.
CREATE OR REPLACE VIEW chat_outbox.partition_status AS
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
