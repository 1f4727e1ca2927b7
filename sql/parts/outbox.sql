-- The write-once outbox's functions (docs/architecture.md, 'The write-once outbox', states the
-- invariants and why each holds): the generation a writer writes to, the relay's batch, the rotation
-- of the generations, the rebase of an outbox that came from another database, and the rules they
-- share. CREATE OR REPLACE: each update runs this same text.
--
-- Every outbox row carries its transaction's id (xid), drawn before the row's id and its generation.
-- A tick is (Mpre, S): Mpre a split point (the id sequence's last value, read before S, never below
-- the previous tick's), S = pg_current_snapshot(). The window between two ticks of a cursor, prev and
-- new, is the rows visible in S_new and not in S_prev, in id order. It is read as two parts split at
-- Mpre_prev: ids above it (the id index), and ids up to it written by a transaction S_prev saw
-- running (its xip list) or did not know yet (at or above its xmax), which is what "not visible in
-- S_prev" means for a row committed since (the (xid, id) index, whose id bound is checked in the
-- index, so a transaction held open costs one probe per window). Both parts check visibility in
-- S_new and S_prev exactly, so the window is complete whatever Mpre is and whatever the id sequence
-- did (restarted, set back, cached): Mpre only decides which index finds a row, and a window has no
-- upper id bound. Rows are never updated (but by the rebase of a moved outbox).

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
-- window), $2 int8 unused (1.5's upper id bound of a window, kept so that either version's relay runs
-- either version's query: a window has none), $3 pg_snapshot its tick S, $4 pg_snapshot the cursors' last
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
		WHERE e.gen IN ($10, $11, $12) AND e.id > $1
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
-- or the tick's own: a row visible in the tick was written after the switch to its generation, which
-- comes a step after the step that opened it (no longer empty) had committed, so that read sees the
-- generation not empty. Read before the tick, an opening, a switch and a row written and committed in
-- between would leave the row out of the window and behind the cursors, never sent.
CREATE OR REPLACE FUNCTION chat_outbox.window_generations(rot chat_outbox.outbox_rotation, done_snap pg_snapshot)
	RETURNS int[]
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY[CASE WHEN chat_outbox.generation_may_hold(rot, 0, done_snap) THEN 0 ELSE -1 END,
	CASE WHEN chat_outbox.generation_may_hold(rot, 1, done_snap) THEN 1 ELSE -1 END,
	CASE WHEN chat_outbox.generation_may_hold(rot, 2, done_snap) THEN 2 ELSE -1 END];

-- Whether a service's outbox is this database's: its rows' and cursors' xids are this cluster's
-- (every row of outbox_origins for it names this database), else it came from another and must be
-- rebased before any write or pass. here: this database's name (chat_outbox.this_database(), which
-- reads the control file: the in-database relay passes the one it read once). PL/pgSQL: the update to
-- 1.6 defines it before it makes the table.
CREATE OR REPLACE FUNCTION chat_outbox.outbox_moved(service text, here text DEFAULT chat_outbox.this_database())
	RETURNS boolean
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
AS $moved$
BEGIN
	RETURN NOT EXISTS (SELECT FROM chat_outbox.outbox_origins o WHERE o.service = outbox_moved.service)
		OR EXISTS (SELECT FROM chat_outbox.outbox_origins o WHERE o.service = outbox_moved.service AND o.origin <> here);
END
$moved$;

-- How many ids the service's outbox id sequence caches per session (1: one at a time, as a pass needs).
CREATE OR REPLACE FUNCTION chat_outbox.outbox_id_cache(service text) RETURNS bigint
	LANGUAGE sql STABLE
RETURN (SELECT s.seqcache FROM pg_catalog.pg_sequence s
	WHERE s.seqrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(pg_catalog.format('%I.outbox_id_seq', service)));

-- outbox_generation's first call in a session, and every call in a relay pass's transaction (which
-- it refuses: chat_outbox.pass_checks says why): refuses to write into an outbox that came from
-- another database until it is rebased (its rows' xids are the old cluster's; a row written now
-- could not be told from them), and notes the check
-- in the session (the sequence's oid: an outbox dropped and made again is checked again).
CREATE OR REPLACE FUNCTION chat_outbox.outbox_generation_checked(service text, gen_seq regclass) RETURNS int
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $checked$
BEGIN
	IF pg_catalog.current_setting('chat_outbox_pass.' || service, true) = 'on' THEN
		RAISE EXCEPTION 'a relay pass''s transaction cannot write to the outbox of service "%"', service
			USING ERRCODE = '25000',
				DETAIL = 'The pass''s ticks would see the row and send it before it commits.',
				HINT = 'Write in another transaction.';
	END IF;
	IF chat_outbox.outbox_moved(service) THEN
		RAISE EXCEPTION 'the outbox of service "%" came from another database and is not rebased yet', service
			USING ERRCODE = '55000',
				DETAIL = 'Its rows and the relay''s cursors carry the transaction ids of the database they were written in; nothing is written to it until they are rebased.',
				HINT = pg_catalog.format('The relay rebases it at its next pass, or run SELECT chat_outbox.rebase_outbox(%L); then send again.', service);
	END IF;
	PERFORM pg_catalog.set_config('chat_outbox_origin.' || service, gen_seq::oid::text, false);
	RETURN (pg_catalog.pg_sequence_last_value(gen_seq) % 3)::int;
END
$checked$;

-- The generation a writer writes to: the service's sequence outbox_generation mod 3, read as it is
-- now, whatever the writer's snapshot (a REPEATABLE READ or SERIALIZABLE writer's snapshot may predate
-- the switch). Every writer reads it after its transaction has its xid (the rotation closes a
-- generation with an xid drawn after the switch, so above every such writer's). The default of every
-- outbox's gen, so that no writer reads it any other way. Once per session and service it checks that
-- the outbox is this database's (outbox_generation_checked); after that, it costs a setting's lookup
-- and the sequence's read. A standard-SQL body: inlined into the INSERT.
CREATE OR REPLACE FUNCTION chat_outbox.outbox_generation(service text, gen_seq regclass) RETURNS int
	LANGUAGE sql VOLATILE
RETURN CASE WHEN pg_catalog.current_setting('chat_outbox_origin.' OPERATOR(pg_catalog.||) service, true)
		OPERATOR(pg_catalog.=) gen_seq::pg_catalog.oid::pg_catalog.text
		AND pg_catalog.current_setting('chat_outbox_pass.' OPERATOR(pg_catalog.||) service, true) IS DISTINCT FROM 'on'
	THEN (pg_catalog.pg_sequence_last_value(gen_seq) OPERATOR(pg_catalog.%) 3)::int
	ELSE chat_outbox.outbox_generation_checked(service, gen_seq) END;

-- Whether cursor c has sent the row (xid, id): visible in its last finished tick, or in its open
-- window up to the last row sent of it: the rebase's rule, and the outbox view's (whose sent_at writes
-- it out inline: chat_outbox.outbox_view_sql, sql/parts/services.sql). A string body (still inlined):
-- a standard-SQL one would keep the cursors' table from taking a column in an update.
CREATE OR REPLACE FUNCTION chat_outbox.sent_by(c chat_outbox.outbox_cursors, xid xid8, id bigint) RETURNS boolean
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $sent$
	SELECT pg_catalog.pg_visible_in_snapshot(xid, c.done_snap)
		OR (id OPERATOR(pg_catalog.<=) c.win_last AND pg_catalog.pg_visible_in_snapshot(xid, c.win_snap))
$sent$;

-- The checks every pass of a service makes once per transaction, before its first batch (relay_batch,
-- and the in-database relay's pass, extension/src/pg/relay_pass.cpp): the transaction has written no
-- row of the outbox (its own rows would be visible to its ticks, and sent before they commit; after
-- the pass, the writers refuse in its transaction: outbox_generation_checked); the id
-- sequence draws one id at a time (a cached id lets a later message overtake an earlier one); and the
-- outbox is this database's, else it is rebased here first. Raises what stops the pass.
CREATE OR REPLACE FUNCTION chat_outbox.pass_checks(service text) RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $checks$
DECLARE
	cached bigint := chat_outbox.outbox_id_cache(service);
	mine boolean;
BEGIN
	IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
		RAISE EXCEPTION 'a relay pass needs READ COMMITTED'
			USING ERRCODE = '25000', DETAIL = 'A tick reads the id sequence, then takes a new snapshot.';
	END IF;
	IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
		EXECUTE pg_catalog.format('SELECT EXISTS (SELECT FROM %I.outbox_events e WHERE e.xid = $1)', service)
			INTO mine USING pg_current_xact_id_if_assigned();
		IF mine THEN
			RAISE EXCEPTION 'a relay pass cannot run in a transaction that wrote to the outbox of service "%"', service
				USING ERRCODE = '25000',
					DETAIL = 'Its ticks would see the transaction''s own rows and send them before they commit.',
					HINT = 'Run the pass in a transaction of its own.';
		END IF;
	END IF;
	IF cached > 1 THEN
		RAISE EXCEPTION 'the outbox id sequence of service "%" caches % ids per session', service, cached
			USING ERRCODE = '55000',
				DETAIL = 'Ids drawn from a cache are not in the order of the sends: a reply could be relayed before the message it answers.',
				HINT = pg_catalog.format('ALTER SEQUENCE %I.outbox_id_seq CACHE 1, then end the sessions that sent meanwhile (they keep their cached ids).', service);
	END IF;
	IF chat_outbox.outbox_moved(service) THEN
		PERFORM chat_outbox.rebase_outbox(service);
	END IF;
END
$checks$;

-- The earliest finished tick among a service's cursors, where a change of the partition count starts
-- every new cursor (NULLs without cursors). Ticks are taken in turn (relay_batch), so each sees all an
-- earlier one saw: the earliest has the lowest xmax, then the lowest xmin, then the longest xip list
-- (two ticks with the same bounds differ only in which transactions had ended: the later one's xip
-- list is a part of the earlier one's; starting from the later would skip the rows of those that
-- ended in between).
CREATE OR REPLACE FUNCTION chat_outbox.earliest_tick(service text, OUT done_snap pg_snapshot, OUT done_mpre bigint)
	LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
AS $earliest$
	SELECT x.done_snap, x.done_mpre FROM chat_outbox.outbox_cursors x WHERE x.service = earliest_tick.service
	ORDER BY pg_snapshot_xmax(x.done_snap), pg_snapshot_xmin(x.done_snap),
		(SELECT count(*) FROM pg_snapshot_xip(x.done_snap)) DESC, x.partition
	LIMIT 1
$earliest$;

-- relay_batch: the next rows of a service to relay, at most batch_size, in id order within each
-- window, and the cursors moved past them, in the caller's transaction (uncommitted until Redis has
-- them; a rollback leaves the cursors where they were). partitions: the count the relay relays
-- under (0: the count the cursors have); excluded: partitions under that count whose Redis shard is
-- down, whose cursors stay. The relays of a service take turns on the service's row of
-- chat_outbox.services (FOR NO KEY UPDATE), so a second relay waits for the first and then starts
-- where it ended. The first call in a transaction makes the pass's checks (chat_outbox.pass_checks).
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
	got int;
	last bigint;
	rot chat_outbox.outbox_rotation;
	gens int[];
	-- named for its parameters: a session that prepared another version's window keeps it unused
	stmt text := 'chat_outbox_w16_' || relay_batch.service;
	-- the transaction-local note that this transaction's pass made its checks
	checked text := 'chat_outbox_pass.' || relay_batch.service;
BEGIN
	IF pg_catalog.current_setting(checked, true) IS DISTINCT FROM 'on' THEN
		PERFORM chat_outbox.pass_checks(svc);
	END IF;
	-- the relays of a service take turns on its row of chat_outbox.services (not on the rotation's
	-- row: a rotation step waits for no pass, and no pass for a rotation step)
	PERFORM FROM chat_outbox.services t WHERE t.name = svc FOR NO KEY UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'service "%" does not exist', svc USING ERRCODE = '42704';
	END IF;
	PERFORM pg_catalog.set_config(checked, 'on', true);
	IF k = 0 THEN
		k := coalesce((SELECT x.partitions FROM chat_outbox.outbox_cursors x WHERE x.service = svc LIMIT 1), 1);
	END IF;
	IF NOT EXISTS (SELECT FROM chat_outbox.outbox_cursors x WHERE x.service = svc AND x.partitions = k) THEN
		-- none yet, or made under another count: every partition starts from the earliest finished
		-- tick (an open window is dropped and its rows go again, as duplicates), or from nothing
		SELECT t.done_snap, t.done_mpre INTO s, mpre FROM chat_outbox.earliest_tick(svc) t;
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
			-- a new tick: Mpre (never below the last one's), then S (a new snapshot: this is a statement of its own)
			mpre := greatest(pg_sequence_last_value(seq), c.done_mpre);
			s := pg_current_snapshot();
			c.win_snap := s;
			c.win_mpre := mpre;
			c.win_m := NULL;
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
		FOR r IN EXECUTE pg_catalog.format('EXECUTE %I (%L, NULL, %L, %L, %L, %L, %L, %L, %L, %L, %L, %L)', stmt,
				greatest(c.done_mpre, coalesce(c.win_last, c.done_mpre)), c.win_snap, c.done_snap, k, g.parts, want,
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
			UPDATE chat_outbox.outbox_cursors x SET win_snap = c.win_snap, win_mpre = c.win_mpre, win_m = NULL, win_last = last
				WHERE x.service = svc AND x.partition = ANY (g.parts);
		END IF;
		want := want - got;
	END LOOP;
END
$batch$;
REVOKE ALL ON FUNCTION chat_outbox.relay_batch(text, int, int, int[]) FROM PUBLIC;

-- The relays' marks (docs/architecture.md, 'What Redis kept: the marks'): each batch-add call writes,
-- beside its partition's jobs and in the same Lua call, its cursor's state after the batch, and runs
-- only if the partition's mark is still the one the committed passes wrote (`marked`). A mark in Redis
-- therefore says which rows of that partition Redis holds, whatever Redis lost since it acknowledged
-- them (a failover, a restart from an older copy), and a call finds out when Redis lost its last
-- writes. relay_marks, after a batch is read (its cursors moved): for the partitions parts of the
-- batch under the count `partitions`, what each call expects (`marked`; NULL while no call of this
-- cursor has marked: a mark there is another cursor's, and anything goes) and the mark it writes, now
-- `marked` in the pass's transaction; nothing when the cursors are under another count (the pass that
-- changes it writes no mark). One text for both relays, compared as text. plpgsql: its
-- body is checked at its first call, after the update that added the columns.
CREATE OR REPLACE FUNCTION chat_outbox.relay_marks(service text, partitions int, parts int[],
	OUT partition int, OUT expect text, OUT mark text)
	RETURNS SETOF record
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $marks$
BEGIN
	RETURN QUERY UPDATE chat_outbox.outbox_cursors x SET marked = m.mark
		FROM (SELECT y.partition, y.marked AS was, jsonb_build_object('made', y.made, 'done_snap', y.done_snap::text,
					'done_mpre', y.done_mpre, 'win_snap', y.win_snap::text, 'win_mpre', y.win_mpre, 'win_last', y.win_last)::text AS mark
				FROM chat_outbox.outbox_cursors y
				WHERE y.service = relay_marks.service AND y.partitions = relay_marks.partitions AND y.partition = ANY (parts)) m
		WHERE x.service = relay_marks.service AND x.partition = m.partition
		RETURNING x.partition, m.was, m.mark;
END
$marks$;
REVOKE ALL ON FUNCTION chat_outbox.relay_marks(text, int, int[]) FROM PUBLIC;

-- relay_rewind: when a relay cannot be sure what Redis keeps (it started, a connection was made again,
-- a pass failed, a call found another mark than `marked`), it reads the marks of the partitions it
-- will send to (marks[i] of parts[i]: NULL when Redis has none) and asks here, in the pass's
-- transaction, before its first batch. A mark of this cursor's making whose state has not sent some
-- row the cursor has sent means Redis lost that row's job: the cursor goes back to the mark's state,
-- and its windows send those rows again (at least once: a job Redis still has is a duplicate, and
-- the receiver's inbox drops a message it has). Every cursor given takes its partition's mark as
-- `marked`, what its next call expects. Returns each cursor moved back and how many rows go again. A
-- mark of another making (a change of the partition count, a rebase) or none is no evidence: nothing
-- moves (Redis that lost everything, marks included, is the operator's to see).
CREATE OR REPLACE FUNCTION chat_outbox.relay_rewind(service text, parts int[], marks text[],
	OUT partition int, OUT resent bigint)
	RETURNS SETOF record
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	SET jit = off
AS $rewind$
#variable_conflict use_column
DECLARE
	svc text := relay_rewind.service;
	c chat_outbox.outbox_cursors;
	was chat_outbox.outbox_cursors;
	m jsonb;
	n bigint;
BEGIN
	-- in turn with the service's passes (relay_batch), whose cursors this moves
	PERFORM FROM chat_outbox.services t WHERE t.name = svc FOR NO KEY UPDATE;
	FOR i IN 1 .. coalesce(cardinality(parts), 0) LOOP
		UPDATE chat_outbox.outbox_cursors x SET marked = marks[i] WHERE x.service = svc AND x.partition = parts[i]
			RETURNING * INTO c;
		CONTINUE WHEN NOT FOUND OR marks[i] IS NULL;
		BEGIN
			m := marks[i]::jsonb;
			was := c;
			was.done_snap := (m ->> 'done_snap')::pg_snapshot;
			was.done_mpre := (m ->> 'done_mpre')::bigint;
			was.win_snap := (m ->> 'win_snap')::pg_snapshot;
			was.win_mpre := (m ->> 'win_mpre')::bigint;
			was.win_last := (m ->> 'win_last')::bigint;
		EXCEPTION WHEN OTHERS THEN
			CONTINUE; -- not a mark of ours
		END;
		CONTINUE WHEN m ->> 'made' IS DISTINCT FROM c.made::text OR was.done_snap IS NULL OR was.done_mpre IS NULL;
		CONTINUE WHEN (was.done_snap::text, was.done_mpre, was.win_snap::text, was.win_mpre, was.win_last)
			IS NOT DISTINCT FROM (c.done_snap::text, c.done_mpre, c.win_snap::text, c.win_mpre, c.win_last);
		-- the rows of this partition the cursor has sent and the mark's state has not (a row not visible in
		-- the mark's last finished tick has an xid at or above that tick's xmin: the xid index's range;
		-- sent_by is NULL for a row outside a state without an open window)
		EXECUTE pg_catalog.format($q$SELECT count(*) FROM %1$I.outbox_events e
			WHERE e.xid >= pg_snapshot_xmin($1) AND chat_outbox.partition_of(e.chat_id, $2) = $3
				AND chat_outbox.sent_by($4, e.xid, e.id) AND chat_outbox.sent_by($5, e.xid, e.id) IS NOT TRUE
				AND NOT EXISTS (SELECT FROM %1$I.outbox_refused f WHERE f.id = e.id)$q$, svc)
			INTO n USING was.done_snap, c.partitions, c.partition, c, was;
		CONTINUE WHEN n = 0; -- the mark is behind only by batches without this partition's rows
		UPDATE chat_outbox.outbox_cursors x SET done_snap = was.done_snap, done_mpre = was.done_mpre,
				win_snap = was.win_snap, win_mpre = was.win_mpre, win_m = NULL, win_last = was.win_last
			WHERE x.service = svc AND x.partition = c.partition;
		partition := c.partition;
		resent := n;
		RETURN NEXT;
	END LOOP;
END
$rewind$;
REVOKE ALL ON FUNCTION chat_outbox.relay_rewind(text, int[], text[]) FROM PUBLIC;

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

-- outbox_rotate: one step of a service's rotation, run by the relay after its passes, in a
-- transaction of its own. Each generation goes round: it takes rows (current); it stops (the switch
-- made another current) and is closed, with this step's xid as its closed_xmax, drawn after the
-- switch, so above the xid of every writer that read it as the current one; once every cursor's
-- last finished tick has an xmin at or above that (every row of it visible, so sent, to every
-- cursor) it is truncated (it is the oldest: the generation after it took rows for a whole retention
-- since); once the current one is older than the retention, a step opens it (no longer empty, so the
-- windows read it) and the next step switches to it (the sequence outbox_generation: the writers
-- take it from then on). The switch is the last write of its step and needs nothing else of it: if
-- that step is rolled back after it, the next step finds the sequence moved and goes on from there.
-- Returns what the truncate waits for (also in chat_outbox.outbox_rotation.waiting), NULL when nothing.
-- retention_s 0: never switches.
CREATE OR REPLACE FUNCTION chat_outbox.outbox_rotate(service text, retention_s int) RETURNS text
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $rotate$
DECLARE
	gen_seq regclass := pg_catalog.to_regclass(pg_catalog.format('%I.outbox_generation', outbox_rotate.service));
	-- the step may close a generation only with an xid it draws after reading the sequence
	fresh boolean := pg_current_xact_id_if_assigned() IS NULL;
	seen bigint;
	c bigint;
	cur int;
	oldest int;
	bound xid8;
	r chat_outbox.outbox_rotation;
	before chat_outbox.outbox_rotation;
	waiting text;
	f record;
	new_id bigint;
	new_gen int;
BEGIN
	IF gen_seq IS NULL THEN
		RETURN NULL; -- no such service (dropped since the relay listed it)
	END IF;
	-- which generation takes rows, read before this transaction has its xid
	seen := pg_sequence_last_value(gen_seq);
	INSERT INTO chat_outbox.outbox_rotation AS t (service, current) VALUES (outbox_rotate.service, (seen % 3)::int)
		ON CONFLICT ON CONSTRAINT outbox_rotation_pkey DO NOTHING;
	SELECT * INTO r FROM chat_outbox.outbox_rotation t WHERE t.service = outbox_rotate.service FOR UPDATE;
	bound := pg_current_xact_id();
	-- only a step holding this row switches: a switch between the two reads (another relay's step)
	-- would make the first read stale, so such a step closes nothing
	c := pg_sequence_last_value(gen_seq);
	fresh := fresh AND c = seen;
	before := r;
	IF chat_outbox.outbox_moved(outbox_rotate.service) THEN
		-- its xids are another database's: nothing is closed or truncated by them until the rebase
		waiting := 'the rebase of an outbox from another database (the relay''s next pass)';
		IF r.waiting IS DISTINCT FROM waiting THEN
			r.waiting := waiting;
			UPDATE chat_outbox.outbox_rotation t SET waiting = r.waiting WHERE t.service = outbox_rotate.service;
		END IF;
		RETURN waiting;
	END IF;
	cur := (c % 3)::int;
	oldest := (cur + 1) % 3;
	IF r.current <> cur THEN
		-- a switch whose step was rolled back after it: the row follows the sequence
		r.current := cur;
		r.opened := NULL;
		r.empty[cur + 1] := false;
		r.started_at := now();
	END IF;
	-- close what stopped taking rows: neither current nor opened, not empty, not closed yet
	FOR gen IN 0..2 LOOP
		IF gen <> cur AND gen IS DISTINCT FROM r.opened AND NOT r.empty[gen + 1] AND r.closed_xmax[gen + 1] IS NULL THEN
			IF fresh THEN
				r.closed_xmax[gen + 1] := bound;
			ELSE
				waiting := pg_catalog.format('generation %s: the relay''s next round (closing it)', gen);
			END IF;
		END IF;
	END LOOP;
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
					EXECUTE pg_catalog.format('INSERT INTO %1$I.outbox_events (chat_id, event, payload, created_at)
						SELECT e.chat_id, e.event, e.payload, e.created_at FROM %1$I.outbox_events e WHERE e.id = $1 RETURNING id, gen',
						outbox_rotate.service) USING f.id INTO new_id, new_gen;
					EXECUTE pg_catalog.format('UPDATE %I.outbox_refused f SET id = $1, gen = $2 WHERE f.id = $3', outbox_rotate.service)
						USING new_id, new_gen, f.id;
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
	ELSIF NOT r.empty[oldest + 1] AND r.opened IS DISTINCT FROM oldest THEN
		waiting := pg_catalog.format('generation %s: the relay''s next round', oldest);
	END IF;
	IF r.opened = oldest THEN
		-- opened by an earlier step, so every window reads it: the writers take it from now
		PERFORM pg_catalog.setval(gen_seq, c + 1, true);
		r.current := oldest;
		r.opened := NULL;
		r.started_at := now();
	ELSIF retention_s > 0 AND r.empty[oldest + 1] AND r.started_at < now() - make_interval(secs => retention_s) THEN
		r.empty[oldest + 1] := false;
		r.opened := oldest;
	END IF;
	r.waiting := waiting;
	IF r IS DISTINCT FROM before THEN
		UPDATE chat_outbox.outbox_rotation t SET current = r.current, started_at = r.started_at, closed_xmax = r.closed_xmax,
			empty = r.empty, waiting = r.waiting, truncated = r.truncated, opened = r.opened WHERE t.service = outbox_rotate.service;
	END IF;
	RETURN waiting;
END
$rotate$;
REVOKE ALL ON FUNCTION chat_outbox.outbox_rotate(text, int) FROM PUBLIC;

-- rebase_outbox: makes the outbox of a service that came from another database (a restore, a
-- logical replica after its cutover) this database's, in the caller's transaction; the relay calls
-- it at its first pass there (chat_outbox.pass_checks), an operator may call it first. The rows the
-- old cursors had not sent (all of them when no cursor came along, as when a relay running during the
-- restore had made cursors of its own first: its rows then go again, never lost) take this
-- transaction's xid, so the
-- next window sends them, in id order, before anything written after; the others take the frozen xid,
-- visible to every snapshot, so they never go again. New cursors start from a snapshot in which this
-- transaction runs; the id sequence is set above every row; the rotation starts anew from what each
-- generation holds. Writers wait on the outbox's lock meanwhile (they refuse before it, by
-- outbox_generation). Refuses while a subscription of this database is enabled: a replica's outbox
-- is rebased at its cutover, once nothing replicates into it. force: rebase an outbox that looks like
-- this database's (a copy whose origin cannot be told apart: docs/deploy.md, Moving a database); the
-- cursors made here then say nothing, and every row goes again. Returns the rows to be sent again.
CREATE OR REPLACE FUNCTION chat_outbox.rebase_outbox(service text, force boolean DEFAULT false) RETURNS bigint
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $rebase$
DECLARE
	svc text := rebase_outbox.service;
	id_seq regclass := pg_catalog.format('%I.outbox_id_seq', rebase_outbox.service)::regclass;
	gen_seq regclass := pg_catalog.format('%I.outbox_generation', rebase_outbox.service)::regclass;
	here text := chat_outbox.this_database();
	me xid8;
	s pg_snapshot;
	k int;
	top bigint;
	top_gen int;
	unsent bigint;
	c bigint;
	cur int;
	holds boolean;
	empty boolean[] := '{true,true,true}';
BEGIN
	PERFORM FROM chat_outbox.services t WHERE t.name = svc FOR NO KEY UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'service "%" does not exist', svc USING ERRCODE = '42704';
	END IF;
	IF NOT force AND NOT chat_outbox.outbox_moved(svc, here) THEN
		RETURN 0;
	END IF;
	IF EXISTS (SELECT FROM pg_catalog.pg_subscription u WHERE u.subdbid = (SELECT d.oid FROM pg_catalog.pg_database d
			WHERE d.datname = pg_catalog.current_database()) AND u.subenabled) THEN
		RAISE EXCEPTION 'the outbox of service "%" came from another database, and this database has an enabled subscription', svc
			USING ERRCODE = '55000', DETAIL = 'A replica''s outbox is rebased at its cutover, once nothing replicates into it.',
				HINT = 'Disable the subscription at the cutover (docs/deploy.md, Moving a database); the relay then rebases it.';
	END IF;
	EXECUTE pg_catalog.format('LOCK TABLE %I.outbox_events IN EXCLUSIVE MODE', svc);
	-- a restore under way: pg_restore sets the sequences after every table's rows, so an id sequence
	-- behind the cursors or rows that came along says the outbox's rows may not all be here yet
	EXECUTE pg_catalog.format('SELECT max(e.id) FROM %I.outbox_events e', svc) INTO top;
	IF NOT force AND coalesce(pg_sequence_last_value(id_seq), 0) < greatest(top, (SELECT max(x.done_mpre)
			FROM chat_outbox.outbox_cursors x WHERE x.service = svc AND x.origin <> here)) THEN
		RAISE EXCEPTION 'the outbox of service "%" came from another database and is not restored whole yet', svc
			USING ERRCODE = '55000',
				DETAIL = 'Its id sequence is behind the rows or cursors that came with it: a restore sets the sequences last.',
				HINT = 'The relay rebases it at a pass once the restore has finished.';
	END IF;
	me := pg_current_xact_id();
	-- sent or not as the cursors that came with the rows say: those made in another database (a cursor
	-- made here, by a relay that ran before a restore brought the rows, knows nothing of them)
	EXECUTE pg_catalog.format($u$UPDATE %1$I.outbox_events e SET xid = CASE WHEN EXISTS (SELECT FROM chat_outbox.outbox_cursors c
			WHERE c.service = $1 AND c.origin <> $3 AND c.partition = chat_outbox.partition_of(e.chat_id, c.partitions)
				AND chat_outbox.sent_by(c, e.xid, e.id))
		THEN '2'::xid8 ELSE $2 END$u$, svc) USING svc, me, here;
	EXECUTE pg_catalog.format('SELECT count(*) FILTER (WHERE e.xid = $1), max(e.id) FROM %I.outbox_events e', svc)
		INTO unsent, top USING me;
	EXECUTE pg_catalog.format('SELECT e.gen FROM %I.outbox_events e ORDER BY e.id DESC LIMIT 1', svc) INTO top_gen;
	-- a snapshot of now in which this transaction runs: its rows are the first window's
	s := pg_current_snapshot();
	IF me < pg_snapshot_xmax(s) THEN
		s := pg_catalog.format('%s:%s:%s', pg_snapshot_xmin(s), pg_snapshot_xmax(s),
			(SELECT string_agg(x::text, ',' ORDER BY x) FROM (SELECT pg_snapshot_xip(s) AS x UNION SELECT me) u))::pg_snapshot;
	END IF;
	k := coalesce((SELECT x.partitions FROM chat_outbox.outbox_cursors x WHERE x.service = svc LIMIT 1),
		(SELECT t.partitions FROM chat_outbox.services t WHERE t.name = svc));
	DELETE FROM chat_outbox.outbox_cursors x WHERE x.service = svc;
	INSERT INTO chat_outbox.outbox_cursors (service, partition, partitions, done_snap, done_mpre)
		SELECT svc, p, k, s, coalesce(top, -9223372036854775808) FROM generate_series(0, k - 1) p;
	IF top IS NOT NULL AND coalesce(pg_sequence_last_value(id_seq), -9223372036854775808) < top THEN
		PERFORM pg_catalog.setval(id_seq, top, true);
	END IF;
	-- the rotation from what each generation holds: the newest row's generation takes rows, the others
	-- that hold any are closed by the next step (with an xid of this database)
	FOR gen IN 0..2 LOOP
		EXECUTE pg_catalog.format('SELECT EXISTS (SELECT FROM %I.outbox_events_%s)', svc, gen) INTO holds;
		empty[gen + 1] := NOT holds;
	END LOOP;
	c := coalesce(pg_sequence_last_value(gen_seq), 0);
	cur := coalesce(top_gen, (c % 3)::int);
	c := c + (cur - (c % 3)::int + 3) % 3;
	PERFORM pg_catalog.setval(gen_seq, c, true);
	empty[cur + 1] := false;
	INSERT INTO chat_outbox.outbox_rotation AS t (service, current, started_at, closed_xmax, empty, waiting, opened)
		VALUES (svc, cur, now(), '{NULL,NULL,NULL}', empty, NULL, NULL)
		ON CONFLICT ON CONSTRAINT outbox_rotation_pkey DO UPDATE SET current = excluded.current, started_at = excluded.started_at,
			closed_xmax = excluded.closed_xmax, empty = excluded.empty, waiting = NULL, opened = NULL;
	DELETE FROM chat_outbox.outbox_origins o WHERE o.service = svc;
	INSERT INTO chat_outbox.outbox_origins (service, origin) VALUES (svc, here);
	RAISE LOG 'chat_outbox: rebased the outbox of service "%" from another database: % rows to send again', svc, unsent;
	RETURN unsent;
END
$rebase$;
REVOKE ALL ON FUNCTION chat_outbox.rebase_outbox(text, boolean) FROM PUBLIC;

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
	PERFORM pg_current_xact_id(); -- the xid before the id and the generation (see the top of this file)
	EXECUTE pg_catalog.format('INSERT INTO %I.outbox_events (chat_id, event, payload, created_at)
		VALUES (chat_outbox.chat_id_of($2), $1, $2, coalesce($3, now())) RETURNING id, xid, chat_id, gen, created_at', svc)
		USING NEW.event, NEW.payload, CASE WHEN TG_OP = 'INSERT' THEN NEW.created_at END
		INTO new_id, NEW.xid, NEW.chat_id, NEW.gen, NEW.created_at;
	IF TG_OP = 'INSERT' AND NEW.refused IS NOT NULL THEN
		EXECUTE pg_catalog.format('INSERT INTO %I.outbox_refused (id, gen, reason) VALUES ($1, $2, $3)', svc)
			USING new_id, NEW.gen, NEW.refused;
	END IF;
	NEW.id := new_id;
	RETURN NEW;
END
$write$;
