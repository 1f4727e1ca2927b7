-- bench/inbox/trigger_every_row.sql - for bench/inbox/run.sh: inbox_apply on every inbox row, as 1.2
-- installed it (no WHEN, no statement triggers; the message's lookup is the same): what 1.3's WHEN saves
-- a plain message is the difference from trigger_as_installed.sql, and what its purge trigger costs the
-- relay's purge too.
DROP TRIGGER IF EXISTS inbox_waiting_check ON workers.inbox;
DROP TRIGGER IF EXISTS inbox_waiting_purge ON workers.inbox;
CREATE OR REPLACE TRIGGER inbox_apply BEFORE INSERT ON workers.inbox
	FOR EACH ROW EXECUTE FUNCTION workers.inbox_apply();
