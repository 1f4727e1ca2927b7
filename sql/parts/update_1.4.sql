-- The update from 1.3 to 1.4 of every existing service: its generations are not vacuumed for their
-- inserts (chat_outbox.set_generation_storage). Runs after the shared functions are in place; the
-- extension's chat_outbox--1.3--1.4.sql and the managed install's update_1.4.sql are this text, after
-- every sql/parts/update_1.4*.sql before it in name order (sql/managed/generate.py). Setting a storage
-- parameter takes each generation's SHARE UPDATE EXCLUSIVE lock: senders and relays go on (a vacuum
-- of it under way is cancelled; a rotation's truncate of it waits for the next round).
-- Idempotent: a second run sets the same parameters again.
DO $update$
DECLARE
	svc text;
BEGIN
	FOR svc IN SELECT s.name FROM chat_outbox.services s ORDER BY s.name LOOP
		PERFORM chat_outbox.set_generation_storage(svc);
	END LOOP;
END
$update$;
