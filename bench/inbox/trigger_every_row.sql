-- bench/inbox/trigger_every_row.sql - for bench/inbox/run.sh: inbox_apply as chat_outbox installs it
-- (sql/parts/services.sql), on every inbox row; undoes trigger_changes_only.sql.
CREATE OR REPLACE TRIGGER inbox_apply BEFORE INSERT ON workers.inbox
	FOR EACH ROW EXECUTE FUNCTION workers.inbox_apply();
