-- The write-once outbox's functions (docs/extension.md, 'How the relay works'): the relay's batch,
-- the rotation of the generations, and the rules both use. CREATE OR REPLACE: the update to 1.2
-- runs this same text.
--
-- Every outbox row carries its transaction's id (xid), drawn before the row's id. A tick is
-- (Mpre, S, M): the id sequence's last value, then S = pg_current_snapshot(), then the last value
-- again. The window between two ticks of a cursor, prev and new, is the rows visible in S_new and
-- not in S_prev. It is (id in (Mpre_prev, M_new]) plus, among ids up to Mpre_prev, (xid in S_prev's
-- xip list) and (xid at or above S_prev's xmax), each filtered by visibility: a row not visible in
-- S_prev with an id at most Mpre_prev got its xid before its id, so before Mpre_prev was read; its
-- transaction was running at S_prev (in the xip list) or got its xid after S_prev's snapshot was
-- computed (at or above its xmax: Postgres may hand out a snapshot computed before the last
-- statement when no transaction ended since, so "taken after Mpre" does not mean "computed after").
-- A row visible in S_new drew its id before S_new, so at most M_new. All three parts are index
-- scans: the id index, and the (xid, id) index whose id bound is checked in the index, so a
-- transaction held open costs one probe per window. Rows are never updated.

-- The chat_id of a payload, by the rule of common/partitions.hpp (ChatIdOfJson): a JSON integer
-- that fits a bigint, else NULL (such a row is in partition 0).
CREATE OR REPLACE FUNCTION chat_outbox.chat_id_of(payload jsonb) RETURNS bigint
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN jsonb_typeof(payload -> 'chat_id') = 'number' AND (payload ->> 'chat_id') ~ '^-?[0-9]{1,19}$'
		AND (payload ->> 'chat_id')::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
	THEN (payload ->> 'chat_id')::bigint END;

-- The partition of a row's chat_id under a count (chat_partition's rule on the stored column).
CREATE OR REPLACE FUNCTION chat_outbox.partition_of(chat_id bigint, partitions int) RETURNS int
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce((((chat_id % partitions) + partitions) % partitions)::int, 0);

-- The query of a window, one text for both ways a batch is read: relay_batch prepares it, the
-- in-database relay keeps it as a plan (extension/src/pg/batch_read.cpp). Its parameters: $1 int8
-- the id after which the window's id arm starts (the cursors' Mpre, or the last row sent of the
-- window), $2 int8 the window's M, $3 pg_snapshot its tick S, $4 pg_snapshot the cursors' last
-- finished tick, $5 int4 the partition count, $6 int4[] the window's partitions, $7 int4 the batch
-- size, $8 int8 the late arms' lower id bound (the last row sent of the window, else the lowest
-- bigint), $9 int8 the last finished tick's Mpre, $10-$12 int4 the generations that can hold the
-- window's rows (-1: none; chat_outbox.window_generations). Its rows: id, event, payload, chat_id,
-- in id order. Its plan holds whatever the statistics say: the late rows' arms ask for xid order,
-- which only the (xid, id) index gives, so no plan walks the old rows' id range.
CREATE OR REPLACE FUNCTION chat_outbox.relay_window_query(service text) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.format($q$SELECT w.id, w.event, w.payload, w.chat_id FROM (
	(SELECT e.id, e.event, e.payload, e.chat_id FROM %1$I.outbox_events e
		WHERE e.gen IN ($10, $11, $12) AND e.id > $1 AND e.id <= $2
			AND pg_visible_in_snapshot(e.xid, $3) AND NOT pg_visible_in_snapshot(e.xid, $4)
			AND ($5 = 1 OR chat_outbox.partition_of(e.chat_id, $5) = ANY ($6))
			AND NOT EXISTS (SELECT FROM %1$I.outbox_refused f WHERE f.id = e.id)
		ORDER BY e.id LIMIT $7)
	UNION ALL
	(SELECT e.id, e.event, e.payload, e.chat_id FROM %1$I.outbox_events e
		WHERE e.id = ANY (ARRAY(
				(SELECT l.id FROM %1$I.outbox_events l
				WHERE l.gen IN ($10, $11, $12) AND l.xid = ANY (ARRAY(SELECT pg_snapshot_xip($4))) AND l.id > $8 AND l.id <= $9 ORDER BY l.xid)
				UNION ALL
				(SELECT l.id FROM %1$I.outbox_events l
				WHERE l.gen IN ($10, $11, $12) AND l.xid >= pg_snapshot_xmax($4) AND l.id > $8 AND l.id <= $9 ORDER BY l.xid)))
			AND e.gen IN ($10, $11, $12) AND pg_visible_in_snapshot(e.xid, $3)
			AND ($5 = 1 OR chat_outbox.partition_of(e.chat_id, $5) = ANY ($6))
			AND NOT EXISTS (SELECT FROM %1$I.outbox_refused f WHERE f.id = e.id)
		ORDER BY e.id LIMIT $7)
) w ORDER BY w.id LIMIT $7$q$, service);

-- Whether generation gen can hold rows of a window whose cursors' last finished tick is done_snap,
-- by the rotation's row rot: it is not empty, and not closed before that tick (every writer of a
-- generation closed at closed_xmax had an xid below it, so at or below that tick's xmin each row is
-- visible in it, or aborted). Without the rotation's row (rot NULL): every generation. An
-- expression only, so the planner inlines it (a body with a subquery would be planned at every call).
CREATE OR REPLACE FUNCTION chat_outbox.generation_may_hold(rot chat_outbox.outbox_rotation, gen int, done_snap pg_snapshot)
	RETURNS boolean
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN rot.service IS NULL OR (NOT rot.empty[gen + 1]
	AND (rot.closed_xmax[gen + 1] IS NULL OR rot.closed_xmax[gen + 1] > pg_snapshot_xmin(done_snap)));

-- The generations that can hold a window's rows, as the window query's three parameters (-1: none).
-- Usually only the current one; the others' scans are pruned before they start, which is most of a
-- small window's cost. The rotation's row is read after the window's tick, in a statement of its own
-- or the tick's own: a row visible in the tick was written after the switch that made its
-- generation current had committed, so that read sees the generation not empty. Read before the
-- tick, a switch and a row written and committed in between would leave the row out of the window
-- and behind the cursors, never sent.
CREATE OR REPLACE FUNCTION chat_outbox.window_generations(rot chat_outbox.outbox_rotation, done_snap pg_snapshot)
	RETURNS int[]
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY[CASE WHEN chat_outbox.generation_may_hold(rot, 0, done_snap) THEN 0 ELSE -1 END,
	CASE WHEN chat_outbox.generation_may_hold(rot, 1, done_snap) THEN 1 ELSE -1 END,
	CASE WHEN chat_outbox.generation_may_hold(rot, 2, done_snap) THEN 2 ELSE -1 END];

-- relay_batch: the next rows of a service to relay, at most batch_size, in id order within each
-- window, and the cursors moved past them, in the caller's transaction (uncommitted until Redis has
-- them; a rollback leaves the cursors where they were). partitions: the count the relay relays
-- under (0: the count the cursors have); excluded: partitions under that count whose Redis shard is
-- down, whose cursors stay. The relays of a service take turns on the service's row of
-- chat_outbox.services (FOR NO KEY UPDATE), so a second relay waits for the first and then starts
-- where it ended.
CREATE OR REPLACE FUNCTION chat_outbox.relay_batch(service text, batch_size int, partitions int, excluded int[],
	OUT id bigint, OUT event text, OUT payload jsonb, OUT chat_id bigint)
	RETURNS SETOF record
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	-- the relays plan with sort, seqscan and bitmapscan off: costs past jit_above_cost, compiled for nothing
	SET jit = off
AS $batch$
#variable_conflict use_column
DECLARE
	svc text := relay_batch.service;
	seq regclass := pg_catalog.format('%I.outbox_id_seq', relay_batch.service)::regclass;
	k int := relay_batch.partitions;
	want int := relay_batch.batch_size;
	g record;
	r record;
	c chat_outbox.outbox_cursors;
	s pg_snapshot;
	mpre bigint;
	m bigint;
	got int;
	last bigint;
	rot chat_outbox.outbox_rotation;
	gens int[];
	-- named for its parameters: a session that prepared another version's window keeps it unused
	stmt text := 'chat_outbox_w13_' || relay_batch.service;
BEGIN
	-- each statement below needs a snapshot of its own: a tick is taken between two reads of the sequence
	IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
		RAISE EXCEPTION 'chat_outbox.relay_batch needs READ COMMITTED'
			USING ERRCODE = '25000', DETAIL = 'A tick reads the id sequence, then takes a new snapshot.';
	END IF;
	-- the relays of a service take turns on its row of chat_outbox.services (not on the rotation's
	-- row: a rotation step waits for no pass, and no pass for a rotation step)
	PERFORM FROM chat_outbox.services t WHERE t.name = svc FOR NO KEY UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'service "%" does not exist', svc USING ERRCODE = '42704';
	END IF;
	IF k = 0 THEN
		k := coalesce((SELECT x.partitions FROM chat_outbox.outbox_cursors x WHERE x.service = svc LIMIT 1), 1);
	END IF;
	IF NOT EXISTS (SELECT FROM chat_outbox.outbox_cursors x WHERE x.service = svc AND x.partitions = k) THEN
		-- none yet, or made under another count: every partition starts from the earliest finished
		-- tick (ticks are taken in turn, so each sees all an earlier one saw; an open window is
		-- dropped and its rows go again, as duplicates), or from nothing
		SELECT x.done_snap, x.done_mpre INTO s, mpre FROM chat_outbox.outbox_cursors x WHERE x.service = svc
			ORDER BY pg_snapshot_xmax(x.done_snap), pg_snapshot_xmin(x.done_snap) LIMIT 1;
		DELETE FROM chat_outbox.outbox_cursors x WHERE x.service = svc;
		INSERT INTO chat_outbox.outbox_cursors (service, partition, partitions, done_snap, done_mpre)
			SELECT svc, p, k, coalesce(s, '1:1:'), coalesce(mpre, -9223372036854775808) FROM generate_series(0, k - 1) p;
	END IF;
	-- the cursors in the same state move together: one window query for all of them
	FOR g IN SELECT x.done_snap::text AS done_text, x.win_snap::text AS win_text, x.win_last,
			array_agg(x.partition ORDER BY x.partition) AS parts
		FROM chat_outbox.outbox_cursors x
		WHERE x.service = svc AND x.partition <> ALL (coalesce(excluded, '{}'))
		GROUP BY 1, 2, 3 ORDER BY min(x.partition)
	LOOP
		EXIT WHEN want <= 0;
		SELECT * INTO c FROM chat_outbox.outbox_cursors x WHERE x.service = svc AND x.partition = g.parts[1];
		IF c.win_snap IS NULL THEN
			-- a new tick: Mpre, then S (a new snapshot: this is a statement of its own), then M
			mpre := coalesce(pg_sequence_last_value(seq), 0);
			s := pg_current_snapshot();
			m := coalesce(pg_sequence_last_value(seq), 0);
			c.win_snap := s;
			c.win_mpre := mpre;
			c.win_m := m;
			c.win_last := NULL;
		END IF;
		-- which generations can hold the window's rows: read after the tick (window_generations says why)
		SELECT * INTO rot FROM chat_outbox.outbox_rotation t WHERE t.service = svc;
		gens := chat_outbox.window_generations(rot, c.done_snap);
		got := 0;
		-- the window's query is prepared once per session and service (planning it cost more than
		-- running it)
		IF NOT EXISTS (SELECT FROM pg_prepared_statements p WHERE p.name = stmt) THEN
			EXECUTE pg_catalog.format('PREPARE %I (bigint, bigint, pg_snapshot, pg_snapshot, int, int[], int, bigint, bigint, int, int, int) AS %s',
				stmt, chat_outbox.relay_window_query(svc));
		END IF;
		FOR r IN EXECUTE pg_catalog.format('EXECUTE %I (%L, %L, %L, %L, %L, %L, %L, %L, %L, %L, %L, %L)', stmt,
				greatest(c.done_mpre, coalesce(c.win_last, c.done_mpre)), c.win_m, c.win_snap, c.done_snap, k, g.parts, want,
				coalesce(c.win_last, -9223372036854775808), c.done_mpre, gens[1], gens[2], gens[3])
		LOOP
			id := r.id;
			event := r.event;
			payload := r.payload;
			chat_id := r.chat_id;
			RETURN NEXT;
			last := r.id;
			got := got + 1;
		END LOOP;
		IF got < want THEN
			-- the window is sent: its tick is now the cursors' last finished one
			UPDATE chat_outbox.outbox_cursors x SET done_snap = c.win_snap, done_mpre = c.win_mpre, done_at = now(),
				win_snap = NULL, win_mpre = NULL, win_m = NULL, win_last = NULL
				WHERE x.service = svc AND x.partition = ANY (g.parts);
		ELSE
			UPDATE chat_outbox.outbox_cursors x SET win_snap = c.win_snap, win_mpre = c.win_mpre, win_m = c.win_m, win_last = last
				WHERE x.service = svc AND x.partition = ANY (g.parts);
		END IF;
		want := want - got;
	END LOOP;
END
$batch$;
REVOKE ALL ON FUNCTION chat_outbox.relay_batch(text, int, int, int[]) FROM PUBLIC;

-- What the truncate of a service's oldest generation waits for, NULL when nothing: every cursor's
-- last finished tick must see every transaction that wrote to it (its xmin at or above the
-- generation's closed_xmax), or the rows it may still hold would be unsent.
CREATE OR REPLACE FUNCTION chat_outbox.rotation_wait(service text, gen int, closed_xmax xid8) RETURNS text
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
AS $wait$
DECLARE
	c record;
	pid int;
BEGIN
	IF closed_xmax IS NULL THEN
		RETURN pg_catalog.format('generation %s: the relay''s next round', gen);
	END IF;
	IF NOT EXISTS (SELECT FROM chat_outbox.outbox_cursors x WHERE x.service = rotation_wait.service) THEN
		RETURN pg_catalog.format('generation %s: the relay''s first pass', gen);
	END IF;
	SELECT x.partition, pg_snapshot_xmin(x.done_snap) AS xmin INTO c FROM chat_outbox.outbox_cursors x
		WHERE x.service = rotation_wait.service AND pg_snapshot_xmin(x.done_snap) < closed_xmax
		ORDER BY pg_snapshot_xmin(x.done_snap), x.partition LIMIT 1;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	IF pg_xact_status(c.xmin) = 'in progress' THEN
		SELECT l.pid INTO pid FROM pg_locks l
			WHERE l.locktype = 'transactionid' AND l.transactionid = c.xmin::xid AND l.mode = 'ExclusiveLock' LIMIT 1;
		RETURN pg_catalog.format('generation %s: transaction %s (pid %s) is still running', gen, c.xmin, coalesce(pid::text, '?'));
	END IF;
	RETURN pg_catalog.format('generation %s: partition %s is not relayed past transaction %s yet', gen, c.partition, c.xmin);
END
$wait$;

-- outbox_rotate: one step of a service's rotation, run by the relay after its passes. Truncates the
-- oldest generation once every cursor is past all its rows (it is the next to take rows, and its rows
-- are at least a retention old: the generation after it took rows for a whole retention since); makes
-- it the one that takes rows once the current one is older than the retention (0: never). Returns
-- what the truncate waits for (also in chat_outbox.outbox_rotation.waiting), NULL when nothing.
CREATE OR REPLACE FUNCTION chat_outbox.outbox_rotate(service text, retention_s int) RETURNS text
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $rotate$
DECLARE
	r chat_outbox.outbox_rotation;
	before chat_outbox.outbox_rotation;
	oldest int;
	waiting text;
	f record;
	new_id bigint;
BEGIN
	SELECT * INTO r FROM chat_outbox.outbox_rotation t WHERE t.service = outbox_rotate.service FOR UPDATE;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	before := r;
	-- a generation that stopped taking rows in an earlier transaction: every sender that read it as
	-- the current one had its xid before then, so below this snapshot's xmax
	FOR gen IN 0..2 LOOP
		IF gen <> r.current AND NOT r.empty[gen + 1] AND r.closed_xmax[gen + 1] IS NULL THEN
			r.closed_xmax[gen + 1] := pg_snapshot_xmax(pg_current_snapshot());
		END IF;
	END LOOP;
	oldest := (r.current + 1) % 3;
	IF NOT r.empty[oldest + 1] AND before.closed_xmax[oldest + 1] IS NOT NULL THEN
		waiting := chat_outbox.rotation_wait(outbox_rotate.service, oldest, r.closed_xmax[oldest + 1]);
		IF waiting IS NULL THEN
			BEGIN
				-- NOWAIT: a session reading the generation (the outbox view) must not queue the relay behind it
				EXECUTE pg_catalog.format('LOCK TABLE %I.outbox_events_%s IN ACCESS EXCLUSIVE MODE NOWAIT', outbox_rotate.service, oldest);
				-- a refused row is kept (unsent, with its reason) until an operator relays it: it moves to
				-- the current generation under a new id, refused there too
				FOR f IN EXECUTE pg_catalog.format('SELECT f.id FROM %I.outbox_refused f WHERE f.gen = $1 ORDER BY f.id',
					outbox_rotate.service) USING oldest
				LOOP
					PERFORM pg_current_xact_id(); -- the xid before the id
					EXECUTE pg_catalog.format('INSERT INTO %1$I.outbox_events (gen, chat_id, event, payload, created_at)
						SELECT $1, e.chat_id, e.event, e.payload, e.created_at FROM %1$I.outbox_events e WHERE e.id = $2 RETURNING id',
						outbox_rotate.service) USING r.current, f.id INTO new_id;
					EXECUTE pg_catalog.format('UPDATE %I.outbox_refused f SET id = $1, gen = $2 WHERE f.id = $3', outbox_rotate.service)
						USING new_id, r.current, f.id;
				END LOOP;
				EXECUTE pg_catalog.format('TRUNCATE %I.outbox_events_%s', outbox_rotate.service, oldest);
				r.empty[oldest + 1] := true;
				r.closed_xmax[oldest + 1] := NULL;
				r.truncated := r.truncated + 1;
			EXCEPTION WHEN lock_not_available THEN
				waiting := pg_catalog.format('generation %s: a session holds a lock on %I.outbox_events_%s', oldest,
					outbox_rotate.service, oldest);
			END;
		END IF;
	ELSIF NOT r.empty[oldest + 1] THEN
		waiting := pg_catalog.format('generation %s: the relay''s next round', oldest);
	END IF;
	IF retention_s > 0 AND r.empty[oldest + 1] AND r.started_at < now() - make_interval(secs => retention_s) THEN
		r.empty[oldest + 1] := false;
		r.closed_xmax[r.current + 1] := NULL;
		r.current := oldest;
		r.started_at := now();
	END IF;
	r.waiting := waiting;
	IF r IS DISTINCT FROM before THEN
		UPDATE chat_outbox.outbox_rotation t SET current = r.current, started_at = r.started_at, closed_xmax = r.closed_xmax,
			empty = r.empty, waiting = r.waiting, truncated = r.truncated WHERE t.service = outbox_rotate.service;
	END IF;
	RETURN waiting;
END
$rotate$;
REVOKE ALL ON FUNCTION chat_outbox.outbox_rotate(text, int) FROM PUBLIC;

-- The outbox view's writes, for operators and tests (roles get no write on it): an INSERT adds an
-- event (unsent); an UPDATE that sets sent_at to NULL sends a row again, one that sets refused to
-- NULL relays a refused row; both add the row anew (a new id, the same payload, so the same jobId).
-- The rows themselves never change: any other UPDATE (a relay of 1.1 marking rows sent) fails.
CREATE OR REPLACE FUNCTION chat_outbox.outbox_view_write() RETURNS trigger
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $write$
DECLARE
	svc text := TG_TABLE_SCHEMA;
	new_id bigint;
BEGIN
	IF TG_OP = 'UPDATE' AND OLD.refused IS NOT NULL AND NEW.refused IS NULL THEN
		EXECUTE pg_catalog.format('DELETE FROM %I.outbox_refused f WHERE f.id = $1', svc) USING OLD.id;
	ELSIF TG_OP = 'UPDATE' AND NOT (OLD.sent_at IS NOT NULL AND NEW.sent_at IS NULL) THEN
		RAISE EXCEPTION 'an outbox row is written once'
			USING ERRCODE = '0A000', DETAIL = 'The relay''s cursors say what is sent (chat_outbox 1.2).',
				HINT = 'Set sent_at to NULL to send rows again, refused to NULL to relay a refused row.';
	ELSIF TG_OP = 'INSERT' AND NEW.sent_at IS NOT NULL THEN
		RAISE EXCEPTION 'an outbox row is written unsent'
			USING ERRCODE = '0A000', DETAIL = 'The relay''s cursors say what is sent; rows never change.';
	END IF;
	PERFORM pg_current_xact_id(); -- the xid before the id (see the top of this file)
	EXECUTE pg_catalog.format('INSERT INTO %I.outbox_events (gen, chat_id, event, payload, created_at)
		VALUES ((SELECT r.current FROM chat_outbox.outbox_rotation r WHERE r.service = $1), chat_outbox.chat_id_of($3), $2, $3,
			coalesce($4, now())) RETURNING id, xid, chat_id, gen, created_at', svc)
		USING svc, NEW.event, NEW.payload, CASE WHEN TG_OP = 'INSERT' THEN NEW.created_at END
		INTO new_id, NEW.xid, NEW.chat_id, NEW.gen, NEW.created_at;
	IF TG_OP = 'INSERT' AND NEW.refused IS NOT NULL THEN
		EXECUTE pg_catalog.format('INSERT INTO %I.outbox_refused (id, gen, reason) SELECT $1, r.current, $2
			FROM chat_outbox.outbox_rotation r WHERE r.service = $3', svc) USING new_id, NEW.refused, svc;
	END IF;
	NEW.id := new_id;
	RETURN NEW;
END
$write$;
