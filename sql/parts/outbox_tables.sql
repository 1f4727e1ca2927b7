-- The relay's position in every outbox, the outboxes' generations and where their transaction ids come
-- from (docs/architecture.md, 'The write-once outbox'). Written only by the relays' functions
-- (sql/parts/outbox.sql: relay_batch, outbox_rotate, rebase_outbox) and create_outbox.

-- One cursor per (service, partition) of this database: the last finished tick (done_snap, with the
-- split point read from the outbox id sequence just before it, done_mpre) and, while a window is sent
-- in several batches, that window's tick (win_snap, win_mpre) and the last id of it sent (win_last).
-- The rows sent are exactly those visible in done_snap, plus those of the open window up to win_last.
-- `partitions` is the count the cursors were made under (every cursor of a service has the same).
-- win_m is 1.5's upper id bound of a window, unused since 1.6 (always NULL). `made` names the cursor
-- (drawn when it is made: a change of the partition count, a rebase): the relays' marks in Redis carry it,
-- so a mark a cursor of another making left under a queue is never taken for its own (relay_rewind).
-- `marked` is the mark the partition's queue holds in Redis as the committed passes know it (NULL: none):
-- what the next batch-add call to it expects to find there (relay_marks).
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
	-- the database whose snapshots they hold (chat_outbox.this_database(), as outbox_origins names it):
	-- part of the key, so that a dump's cursors load beside those a relay made while the restore was
	-- under way (the rebase judges by the dump's, and keeps none of either)
	origin text NOT NULL DEFAULT chat_outbox.this_database(),
	made uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid(),
	marked text,
	PRIMARY KEY (service, partition, origin)
);
COMMENT ON TABLE chat_outbox.outbox_cursors IS 'Per service and partition: the relay''s last finished tick and the window it is sending.';

-- One row per service: the rotation's state of its three outbox generations (outbox_events_0/1/2).
-- Which generation takes new rows is not here: it is the service's sequence outbox_generation
-- (its last value mod 3), which a writer reads whatever its snapshot (chat_outbox.outbox_generation);
-- `current` follows it at every rotation step, for the status. Per generation (array index gen + 1):
-- closed_xmax, once it stopped taking rows, an xid drawn after every writer that could write to it
-- had its own (every such writer is below it); empty, whether it holds no row and takes none. `opened`
-- is the empty generation made ready to take rows (no longer empty) by one step, which the next step
-- makes the one that takes them (docs/architecture.md, 'The write-once outbox').
CREATE TABLE chat_outbox.outbox_rotation (
	service text PRIMARY KEY,
	current int NOT NULL DEFAULT 0 CHECK (current BETWEEN 0 AND 2),
	started_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	closed_xmax pg_catalog.xid8[] NOT NULL DEFAULT '{NULL,NULL,NULL}',
	empty boolean[] NOT NULL DEFAULT '{false,true,true}',
	waiting text, -- what the truncate of the oldest generation waits for, NULL when nothing
	truncated bigint NOT NULL DEFAULT 0, -- generations truncated so far
	opened int CHECK (opened BETWEEN 0 AND 2)
);
COMMENT ON TABLE chat_outbox.outbox_rotation IS 'Per service: the rotation''s state of its outbox generations.';

-- Whose transaction ids a service's outbox rows and the relay's cursors carry: the database they were
-- written in, as chat_outbox.this_database() names it (the cluster's system_identifier and the
-- database's oid), one row per install of the service (create_outbox: CREATE EXTENSION for the seed
-- services, create_service for the others), told apart by a token of its own. A dump restored in
-- another database brings its rows along, beside the new install's (the tokens differ, so they
-- never conflict), as does a logical replica: while a row names another database, the writers
-- refuse and the relay rebases the outbox (chat_outbox.rebase_outbox), which leaves one row, this
-- database's. Restored in the same database, every row names it: nothing to rebase.
CREATE TABLE chat_outbox.outbox_origins (
	service text NOT NULL,
	origin text NOT NULL,
	token uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid(),
	PRIMARY KEY (service, token)
);
COMMENT ON TABLE chat_outbox.outbox_origins IS 'Per service: the database whose transaction ids its outbox rows and cursors carry.';
