#!/usr/bin/env bash
# tests/extension/update_waiting.sh - extension.update_waiting (and managed.update_waiting, through
# managed/in_managed_mode.sh): the update from 1.2 to 1.3 finds the changes that wait for their message.
# chat_outbox 1.2 installed (its base and updates, as every older version: HARNESS_INSTALL_VERSION in tests/harness/lib.sh)
# and a service created after it; in the inbox of a seed service and of that one, stored the way
# chat-outboxd stores them: an edit and a delete of a message that is not there yet, a message with an
# edit of it, a plain message. The update (ALTER EXTENSION chat_outbox UPDATE TO '1.3', or update_1.3.sql as the
# owner, run twice: the second run changes nothing) leaves exactly the first message waiting in each
# service; that message, stored after the update, arrives deleted, and then nothing waits. With the
# extension, the waiting table belongs to it for the seed's service only, as after CREATE EXTENSION.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
export HARNESS_INSTALL_VERSION=1.2
managed=${HARNESS_PG_MANAGED:-0}
harness_init "$([ "$managed" = 1 ] && echo managed-)update-waiting"
harness_redis_start
harness_pg_start
q "SELECT chat_outbox.create_service('later')" >/dev/null
expect_eq "1.2 has no waiting table" "" "$(q "SELECT to_regclass('workers.inbox_waiting')")"

absent=00000000-0000-4000-8000-0000000000a1
present=00000000-0000-4000-8000-0000000000a2
for s in workers later; do
	q "INSERT INTO $s.inbox (message_id, chat_id, body, sender, target, kind, version, edited_at, deleted_at) VALUES
		(gen_random_uuid(), 3, 'edited', 'alice', '$absent', 'edited', 1, now(), NULL),
		(gen_random_uuid(), 3, '', 'alice', '$absent', 'deleted', 2, NULL, now()),
		('$present', 3, 'sent', 'alice', NULL, NULL, 0, NULL, NULL),
		(gen_random_uuid(), 3, 'edited', 'alice', '$present', 'edited', 1, now(), NULL),
		(gen_random_uuid(), 3, 'plain', 'alice', NULL, NULL, 0, NULL, NULL)" >/dev/null
done

update() {
	if [ "$managed" = 1 ]; then
		psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -f "$H_ROOT/sql/managed/update_1.3.sql" >"$H_DIR/update.log" 2>&1 ||
			{ cat "$H_DIR/update.log" >&2; fail "update_1.3.sql failed"; }
	else
		psql -XAtq -v ON_ERROR_STOP=1 "$PG_SUPER_URL" -c "ALTER EXTENSION chat_outbox UPDATE TO '1.3'" >/dev/null
		expect_eq "extension version" "1.3" "$(q "SELECT extversion FROM pg_extension WHERE extname = 'chat_outbox'")"
	fi
}
waiting() { # the waiting rows of service $1
	q "SELECT target, since IS NOT NULL FROM $1.inbox_waiting ORDER BY target"
}
update
for s in workers later; do
	expect_eq "$s: the message with changes and no row of its own waits" "$absent|t" "$(waiting $s)"
done
if [ "$managed" = 1 ]; then
	update
	for s in workers later; do
		expect_eq "$s: update_1.3.sql run again changes nothing" "$absent|t" "$(waiting $s)"
	done
else
	member() { # member <table>: whether it belongs to the extension
		q "SELECT EXISTS (SELECT FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
			WHERE e.extname = 'chat_outbox' AND d.objid = '$1'::regclass AND d.deptype = 'e')"
	}
	expect_eq "inbox_waiting belongs to the extension for the seed's service, not for one made later" "t|f" \
		"$(member workers.inbox_waiting)|$(member later.inbox_waiting)"
fi
for s in workers later; do
	q "INSERT INTO $s.inbox (message_id, chat_id, body, sender) VALUES ('$absent', 3, 'as sent', 'alice')" >/dev/null
	expect_eq "$s: the message stored after the update arrives deleted; nothing waits" "|t|2|0" \
		"$(q "SELECT body, deleted_at IS NOT NULL, version, (SELECT count(*) FROM $s.inbox_waiting) FROM $s.inbox
			WHERE message_id = '$absent'")"
done
echo "ok   the update to 1.3 found the change waiting in each service; its message took it after"
echo "PASS"
