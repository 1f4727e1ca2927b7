-- bench/inbox/trigger_changes_only.sql - a probe for bench/inbox/run.sh, never an install: inbox_apply
-- runs for edits and deletes only, and no statement trigger runs, so a plain message costs no trigger
-- at all: the bound for what trigger_as_installed.sql (1.3) can save over trigger_every_row.sql (1.2).
-- Wrong as a schema: a message arriving after its edits or delete would not take their state.
DROP TRIGGER IF EXISTS inbox_waiting_check ON workers.inbox;
DROP TRIGGER IF EXISTS inbox_waiting_purge ON workers.inbox;
CREATE OR REPLACE TRIGGER inbox_apply BEFORE INSERT ON workers.inbox
	FOR EACH ROW WHEN (NEW.target IS NOT NULL) EXECUTE FUNCTION workers.inbox_apply();
