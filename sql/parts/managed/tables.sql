-- What the extension's settings (chat_outbox.*) hold, for what SQL and the external relay read: custom
-- settings cannot be declared without the library, and a placeholder set with SET would let any
-- caller raise the body limit for itself. Only the owner may change this row.
CREATE TABLE chat_outbox.settings (
	only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
	max_body_bytes int NOT NULL DEFAULT 65536 CHECK (max_body_bytes BETWEEN 1 AND 268435456),
	retention interval NOT NULL DEFAULT '1 day' CHECK (retention >= '0'),
	inbox_retention interval NOT NULL DEFAULT '0' CHECK (inbox_retention >= '0'),
	-- how an outbox insert wakes the relays: 'notify' (pg_notify; serializes the commits that
	-- notify) or 'wal' (a transactional logical decoding message, read by relays started with
	-- --wake logical; costs a commit nothing but one small WAL record)
	wake text NOT NULL DEFAULT 'notify' CHECK (wake IN ('notify', 'wal'))
);
INSERT INTO chat_outbox.settings DEFAULT VALUES;
COMMENT ON TABLE chat_outbox.settings IS 'max_body_bytes (send_message, publish_event), retention and inbox_retention (the relay''s purge; 0 keeps rows), wake (notify or wal: how an outbox insert wakes the relays).';

-- What the extension keeps in shared memory, written by the external relays instead.
-- One row per relay process: its heartbeat, state and last error.
CREATE TABLE chat_outbox.relays (
	relay text PRIMARY KEY,
	pid int NOT NULL,
	state text NOT NULL,
	heartbeat_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	last_error text,
	last_error_at timestamptz,
	redis_warning text,
	redis_appendfsync text,
	redis_shards text[] -- its --redis-url list in order, each URL without its password
);
COMMENT ON TABLE chat_outbox.relays IS 'chat-outbox-relay processes: each updates its row after every round and every second while it waits (every backoff step, at most 5 s, while Redis fails); one silent for 10 s counts as stopped.';
-- One row per service: what the relays relayed last, written in the pass's own transaction.
CREATE TABLE chat_outbox.relay_progress (
	service text PRIMARY KEY,
	last_relayed_id bigint,
	last_relayed_at timestamptz,
	relayed_total bigint NOT NULL DEFAULT 0,
	service_error text,
	layout int, -- the partition count the relays relay the service under (the layout key in Redis)
	layout_change text -- while a change of the count waits for the old layout's queues to drain: what it waits for
);
