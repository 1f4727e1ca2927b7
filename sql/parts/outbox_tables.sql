-- The relay's position in every outbox, and the outboxes' generations (docs/extension.md, 'How the
-- relay works'). Written only by the relays' functions below (relay_batch, outbox_rotate).

-- One cursor per (service, partition): the last finished tick (done_snap, with the outbox id
-- sequence's value read just before it, done_mpre) and, while a window is sent in several batches,
-- that window's tick (win_snap, win_mpre, win_m) and the last id of it sent (win_last). The rows sent
-- are exactly those visible in done_snap, plus those of the open window up to win_last. `partitions`
-- is the count the cursors were made under (every cursor of a service has the same).
CREATE TABLE chat_outbox.outbox_cursors (
	service text NOT NULL,
	partition int NOT NULL,
	partitions int NOT NULL,
	done_snap pg_catalog.pg_snapshot NOT NULL,
	done_mpre bigint NOT NULL,
	done_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	win_snap pg_catalog.pg_snapshot,
	win_mpre bigint,
	win_m bigint,
	win_last bigint,
	PRIMARY KEY (service, partition)
);
COMMENT ON TABLE chat_outbox.outbox_cursors IS 'Per service and partition: the relay''s last finished tick and the window it is sending.';

-- One row per service: which of its three outbox generations (outbox_events_0/1/2) takes new rows,
-- since when, and per generation (array index gen + 1) the xmax of a snapshot taken after it stopped
-- taking rows (every transaction that wrote to it is below it) and whether it is empty (truncated).
CREATE TABLE chat_outbox.outbox_rotation (
	service text PRIMARY KEY,
	current int NOT NULL DEFAULT 0 CHECK (current BETWEEN 0 AND 2),
	started_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	closed_xmax pg_catalog.xid8[] NOT NULL DEFAULT '{NULL,NULL,NULL}',
	empty boolean[] NOT NULL DEFAULT '{false,true,true}',
	waiting text, -- what the truncate of the oldest generation waits for, NULL when nothing
	truncated bigint NOT NULL DEFAULT 0 -- generations truncated so far
);
COMMENT ON TABLE chat_outbox.outbox_rotation IS 'Per service: the outbox generation that takes new rows, and the rotation''s state.';
