-- bench/inbox/trigger_as_installed.sql - for bench/inbox/run.sh: the inbox's triggers as chat_outbox
-- installs them (sql/parts/services.sql): inbox_apply for a message only while a change waits for its
-- message; undoes trigger_every_row.sql and trigger_changes_only.sql.
SELECT chat_outbox.define_service_functions('workers');
