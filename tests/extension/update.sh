#!/usr/bin/env bash
# extension.update (and managed.update, through managed/in_managed_mode.sh): an install of chat_outbox
# 1.0 updated in place to 1.1 (senders on messages, edits and deletes) while chat-outboxd --service workers runs:
# ALTER EXTENSION chat_outbox UPDATE (1.0 -> 1.1 -> 1.2 -> 1.3 -> 1.4), or in managed mode
# sql/managed/update_1.1.sql to update_1.4.sql as the owner (1.2: the write-once outbox, the relay of 1.2
# relays 1.1's outbox until then; 1.3: the inbox's changes waiting for their message; 1.4: the
# generations' storage parameters).
# The daemon of 1.1 stores and shows what is sent before the update without senders (and a client's
# send calls the two-argument send_message), and takes the columns up without a restart: a message sent
# before the update arrives with sender NULL, one sent after with its sender, on the inbox and in a /ws
# client's history, and a client's send after it passes its sub; a two-argument send still works; a
# message sent before the update is edited and another deleted after it, and the running daemon stores
# both in order (it takes the edit columns up like the senders); a /ws client edits and deletes; a
# role granted send_message and the receiver's inbox columns before the update may still use them; and
# the updated database's functions (their text, ACLs and extension membership), columns and column
# grants, and its tables' storage parameters equal a fresh install's with the same services and grants.
. "$(dirname "$0")/../harness/lib.sh"
export HARNESS_INSTALL_VERSION=1.0
daemon_env update
managed=${HARNESS_PG_MANAGED:-0}

# what the update must carry over: a service created after the install (in the extension, not one of
# its objects), a role granted a service, a receiver role
setup_services() { # setup_services <url>
	psql -XAtq -v ON_ERROR_STOP=1 "$1" -c "SELECT chat_outbox.create_service('later')" \
		-c "SELECT chat_outbox.grant_service('consumers', 'app')" \
		-c "SELECT chat_outbox.grant_service('later', 'app')" \
		-c "SELECT chat_outbox.grant_service('workers', 'recv', receiver => true)" >/dev/null
}
psql -XAtq -v ON_ERROR_STOP=1 "$PG_SUPER_URL" -c "CREATE ROLE app" -c "CREATE ROLE recv" >/dev/null
setup_services "$PGURL"
expect_eq "1.0: send_message has two arguments" "chat_id bigint, body text" \
	"$(q "SELECT pg_get_function_identity_arguments('consumers.send_message'::regproc)")"

# ws_ask <frame> <expression of a>: a /ws client of chat 42 (sub reader) sends one request and prints
# the expression over the answer a
ws_ask() {
	node --input-type=module -e "
import { openWs } from '$H_ROOT/tests/harness/ws_client.mjs';
import { token } from '$H_ROOT/tests/harness/jwt.mjs';
const ws = openWs('ws://127.0.0.1:$DAEMON_PORT/ws?token=' + token([42], { sub: 'reader' }));
await ws.opened;
const a = await ws.ask($1);
console.log($2);
ws.close();"
}

# A daemon of 1.1 against the 1.0 tables: it stores, shows and sends without senders
daemon_start workers.log --service workers --queue chat-messages
daemon_wait_healthy
q "SELECT consumers.send_message(42, 'before the update')" >/dev/null
wait_inbox workers 1 30
expect_eq "a client's send before the update: acked, without a sender" '["sent before the update",null]' \
	"$(ws_ask "{ type: 'send', chat_id: 42, body: 'sent before the update' }" "JSON.stringify([a.message?.body, a.message?.sender])")"

if [ "$managed" = 1 ]; then
	for v in $(harness_managed_updates 1.0); do
		psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -f "$H_ROOT/sql/managed/update_$v.sql" >"$H_DIR/update.log" 2>&1 ||
			{ cat "$H_DIR/update.log" >&2; fail "update_$v.sql failed"; }
	done
else
	psql -XAtq -v ON_ERROR_STOP=1 "$PG_SUPER_URL" -c "ALTER EXTENSION chat_outbox UPDATE" >/dev/null
	expect_eq "extension version" "$(harness_ext_version)" "$(q "SELECT extversion FROM pg_extension WHERE extname = 'chat_outbox'")"
fi

# the running daemon takes the columns up: the first message with a sender tells it to look again
q "SELECT consumers.send_message(42, 'after the update', 'alice')" >/dev/null
wait_inbox workers 2 30
q "SELECT consumers.send_message(42, 'two arguments after the update')" >/dev/null
wait_inbox workers 3 30
expect_eq "senders on the inbox" "before the update|
after the update|alice
two arguments after the update|" \
	"$(q "SELECT body, sender FROM workers.inbox ORDER BY seq")"
# The gateway reads the senders once it found the column: at once after it was handed a message with a
# sender, else within InboxSchema::kRecheck (5 s). Its history shows alice, then a client's send passes
# its sub.
history_shows_alice() {
	ws_ask "{ type: 'history', chat_id: 42 }" "(a.messages ?? []).map((m) => m.body + '|' + m.sender).join()" |
		grep -q 'after the update|alice'
}
harness_wait_for 30 history_shows_alice || fail "the gateway's history never showed the sender alice"
expect_eq "a client's send after the update: its sub as sender" '["sent after the update","reader"]' \
	"$(ws_ask "{ type: 'send', chat_id: 42, body: 'sent after the update' }" "JSON.stringify([a.message?.body, a.message?.sender])")"

# a client's send with a client_msg_id after the update (1.6): acked with it; again, the same message
keyed_send="{ type: 'send', chat_id: 42, body: 'keyed after the update', client_msg_id: 'update-key' }"
first=$(ws_ask "$keyed_send" "a.message?.id + '|' + a.message?.client_msg_id + '|' + (a.repeat === true)")
again=$(ws_ask "$keyed_send" "a.message?.id + '|' + a.message?.client_msg_id + '|' + (a.repeat === true)")
expect_eq "a keyed send after the update, then again: one message" "${first%|false}|true" "$again"
expect_eq "its key" "update-key" "$(echo "$first" | cut -d'|' -f2)"
q "DELETE FROM workers.messages WHERE body = 'keyed after the update'" >/dev/null

# the same through the gateway: a /ws client's history of chat 42, oldest first
expect_eq "senders in a /ws history" \
	'before the update|null,sent before the update|null,after the update|alice,two arguments after the update|null,sent after the update|reader' \
	"$(ws_ask "{ type: 'history', chat_id: 42 }" \
		"(a.messages ?? []).map((m) => m.body + '|' + m.sender).reverse().join()")"

# edits and deletes across the update: a message sent before it (version 0 by the new column's
# default) edited, another deleted; the daemon started against 1.0 tables stores both in order
q "SELECT consumers.edit_message((SELECT id FROM consumers.messages WHERE body = 'before the update'), 'edited after the update')" >/dev/null
q "SELECT consumers.delete_message((SELECT id FROM consumers.messages WHERE body = 'two arguments after the update'))" >/dev/null
wait_inbox workers 5 30
expect_eq "the inbox after an edit and a delete: messages in their state now, then the two events" "edited after the update|t|f|
after the update|f|f|
|f|t|
edited after the update|t|f|edited
|f|t|deleted" \
	"$(q "SELECT body, edited_at IS NOT NULL, deleted_at IS NOT NULL, kind FROM workers.inbox ORDER BY seq")"
expect_eq "a /ws client edits and deletes its own message after the update" '["edited by reader","reader"]|true' \
	"$(ws_ask "{ type: 'edit', message_id: '$(q "SELECT id FROM workers.messages WHERE body = 'sent after the update'")', body: 'edited by reader' }" \
		"JSON.stringify([a.message?.body, a.message?.sender])")|$(ws_ask "{ type: 'delete', message_id: '$(q "SELECT id FROM workers.messages WHERE body = 'edited by reader'")' }" \
		"a.message?.deleted_at !== undefined")"

# the grants carried over
expect_eq "app may edit and delete, as it may send" "t|t" "$(q "SELECT has_function_privilege('app', 'consumers.edit_message(uuid, text, text)', 'EXECUTE'),
	has_function_privilege('app', 'later.delete_message(uuid, text)', 'EXECUTE')")"
expect_eq "recv may store edits" "t" "$(q "SELECT has_column_privilege('recv', 'workers.inbox', 'target', 'INSERT')")"
expect_eq "app may still send (send_message with its client_msg_id, 1.6: one function)" "t|t|1|1" "$(q "SELECT
	has_function_privilege('app', 'consumers.send_message(bigint, text, text, text)', 'EXECUTE'),
	has_function_privilege('app', 'later.send_message(bigint, text, text, text)', 'EXECUTE'),
	(SELECT count(*) FROM pg_proc WHERE proname = 'send_message' AND pronamespace = 'consumers'::regnamespace),
	(SELECT count(*) FROM pg_proc WHERE proname = 'send_message' AND pronamespace = 'later'::regnamespace)")"
expect_eq "recv may store senders" "t" "$(q "SELECT has_column_privilege('recv', 'workers.inbox', 'sender', 'INSERT')")"
expect_eq "membership came with the update: app changes it, recv reads it and checks sends" "t|t|t|t|f|t" "$(q "SELECT
	has_function_privilege('recv', 'chat_outbox.check_member(bigint, text)', 'EXECUTE'),
	has_function_privilege('app', 'chat_outbox.add_member(bigint, text)', 'EXECUTE'),
	has_function_privilege('app', 'chat_outbox.remove_member(bigint, text)', 'EXECUTE'),
	has_table_privilege('app', 'chat_outbox.members', 'INSERT'),
	has_table_privilege('recv', 'chat_outbox.members', 'INSERT'), has_table_privilege('recv', 'chat_outbox.members', 'SELECT')")"

# the updated schema equals a fresh install's
psql -XAtq -v ON_ERROR_STOP=1 "$PG_SUPER_URL" -c "CREATE DATABASE fresh OWNER $(q "SELECT current_user")" >/dev/null
fresh_url=${PGURL%/chat}/fresh
if [ "$managed" = 1 ]; then
	psql -XAtq -v ON_ERROR_STOP=1 "$fresh_url" -f "$H_ROOT/sql/managed/chat_outbox_managed.sql" >/dev/null
else
	psql -XAtq -v ON_ERROR_STOP=1 "$fresh_url" -c "CREATE EXTENSION chat_outbox" >/dev/null
fi
setup_services "$fresh_url"
schema() { # every function of ours with its text, owner, ACL and membership; every column with its grants
	psql -XAtq -v ON_ERROR_STOP=1 "$1" -c "
		SELECT n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') '
			|| pg_get_userbyid(p.proowner) || ' ' || coalesce(p.proacl::text, '-') || ' ' || md5(pg_get_functiondef(p.oid))
			|| ' member=' || EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname IN ('chat_outbox', 'consumers', 'workers', 'later')
		UNION ALL
		SELECT c.relnamespace::regnamespace || '.' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
			|| ' ' || a.attnum || ' ' || coalesce(a.attacl::text, '-')
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.relnamespace::regnamespace::text IN ('chat_outbox', 'consumers', 'workers', 'later') AND c.relkind IN ('r', 'p', 'v')
			AND a.attnum > 0 AND NOT a.attisdropped
		UNION ALL
		SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
		WHERE c.relnamespace::regnamespace::text IN ('chat_outbox', 'consumers', 'workers', 'later')
		UNION ALL
		SELECT t.tgrelid::regclass || ' ' || pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
		WHERE c.relnamespace::regnamespace::text IN ('chat_outbox', 'consumers', 'workers', 'later') AND NOT t.tgisinternal
		UNION ALL
		SELECT c.conrelid::regclass || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid) FROM pg_constraint c
		WHERE c.connamespace::regnamespace::text IN ('chat_outbox', 'consumers', 'workers', 'later')
		UNION ALL
		SELECT c.oid::regclass || ' storage ' || coalesce(c.reloptions::text, '-') || ' toast ' || coalesce(t.reloptions::text, '-')
		FROM pg_class c LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
		WHERE c.relnamespace::regnamespace::text IN ('chat_outbox', 'consumers', 'workers', 'later') AND c.relkind IN ('r', 'p')
		UNION ALL
		SELECT 'membership grants ' || coalesce((SELECT relacl::text FROM pg_class WHERE oid = 'chat_outbox.members'::regclass), '-')
			|| ' ' || coalesce((SELECT nspacl::text FROM pg_namespace WHERE nspname = 'chat_outbox'), '-')
		ORDER BY 1"
}
# no generation is vacuumed for its inserts (truncated instead): set by the update, as by create_service
expect_eq "generations, and those not vacuumed for inserts (table and TOAST)" "9|9" "$(q "
	SELECT count(*), count(*) FILTER (WHERE c.reloptions @> '{autovacuum_vacuum_insert_threshold=-1}'
		AND t.reloptions @> '{autovacuum_vacuum_insert_threshold=-1}')
	FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid
	WHERE c.relname ~ '^outbox_events_[0-2]$' AND c.relnamespace::regnamespace::text IN ('consumers', 'workers', 'later')")"
schema "$PGURL" >"$H_DIR/schema.updated"
schema "$fresh_url" >"$H_DIR/schema.fresh"
diff -u "$H_DIR/schema.fresh" "$H_DIR/schema.updated" || fail "the updated schema differs from a fresh install's"
echo "ok   the updated schema equals a fresh install's ($(wc -l <"$H_DIR/schema.fresh") functions, columns, indexes, triggers, constraints and tables' storage)"
echo "PASS"
