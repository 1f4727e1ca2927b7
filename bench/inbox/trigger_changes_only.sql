-- bench/inbox/trigger_changes_only.sql - a probe for bench/inbox/run.sh, never an install: inbox_apply
-- runs for edits and deletes only, so a plain message costs no trigger call. What a message's trigger
-- call costs is the difference from trigger_every_row.sql. Wrong as a schema: a message arriving after
-- its edits or delete would not take their state.
DROP TRIGGER inbox_apply ON workers.inbox;
CREATE TRIGGER inbox_apply BEFORE INSERT ON workers.inbox
	FOR EACH ROW WHEN (NEW.target IS NOT NULL) EXECUTE FUNCTION workers.inbox_apply();
