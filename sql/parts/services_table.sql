-- Contract: docs/architecture.md. Everything is schema-qualified so that no caller's
-- search_path can change what these functions do.

-- One row per service; the relay worker rereads it about once a second, so
-- UPDATE chat_outbox.services SET queue = ... applies without a restart.
CREATE TABLE chat_outbox.services (
	name text PRIMARY KEY CHECK (name OPERATOR(pg_catalog.~) '^[a-z_][a-z0-9_]{0,47}$'),
	-- a BullMQ queue name (the rule of common/bullmq/queue_keys.hpp, IsValidName: non-empty, no ':'),
	-- at most 255 bytes: the relay keeps the name in a 256-byte buffer and would truncate a longer one
	queue text NOT NULL UNIQUE CHECK (queue OPERATOR(pg_catalog.<>) '' AND pg_catalog.strpos(queue, ':') OPERATOR(pg_catalog.=) 0
		AND pg_catalog.octet_length(queue) OPERATOR(pg_catalog.<=) 255),
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	-- the number of partitions the relay spreads the service's chats over (common/partitions.hpp:
	-- 1 keeps the queue <queue>, more make queues <queue>-p0 ...); changed with set_partitions()
	partitions int NOT NULL DEFAULT 1 CHECK (partitions BETWEEN 1 AND 256)
);
COMMENT ON TABLE chat_outbox.services IS 'Services whose outbox the chat_outbox relay moves to BullMQ queue <queue>.';

CREATE TRIGGER services_changed AFTER INSERT OR UPDATE OR DELETE ON chat_outbox.services
	FOR EACH STATEMENT EXECUTE FUNCTION chat_outbox.services_changed();

