#!/usr/bin/env bash
# extension.update (and managed.update, through managed/in_managed_mode.sh): an install of chat_outbox
# 1.0 updated in place to 1.1 (senders on messages) while chat-outboxd --service workers runs:
# ALTER EXTENSION chat_outbox UPDATE, or in managed mode sql/managed/update_1.1.sql as the owner.
# A message sent before the update arrives with sender NULL, one sent after with its sender, on the
# inbox and in a /ws client's history; a two-argument send still works; a role granted send_message
# and the receiver's inbox columns before the update may still use them; and the updated database's
# functions (their text, ACLs and extension membership), columns and column grants equal a fresh
# 1.1 install's with the same services and grants.
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

daemon_start workers.log --service workers --queue chat-messages
daemon_wait_healthy
q "SELECT consumers.send_message(42, 'before the update')" >/dev/null

if [ "$managed" = 1 ]; then
	psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -f "$H_ROOT/sql/managed/update_1.1.sql" >"$H_DIR/update.log" 2>&1 ||
		{ cat "$H_DIR/update.log" >&2; fail "update_1.1.sql failed"; }
else
	psql -XAtq -v ON_ERROR_STOP=1 "$PG_SUPER_URL" -c "ALTER EXTENSION chat_outbox UPDATE" >/dev/null
	expect_eq "extension version" "1.1" "$(q "SELECT extversion FROM pg_extension WHERE extname = 'chat_outbox'")"
fi

q "SELECT consumers.send_message(42, 'after the update', 'alice')" >/dev/null
q "SELECT consumers.send_message(42, 'two arguments after the update')" >/dev/null
wait_inbox workers 3 60
expect_eq "senders on the inbox" "before the update|
after the update|alice
two arguments after the update|" \
	"$(q "SELECT body, sender FROM workers.inbox ORDER BY seq")"

# the same through the gateway: a /ws client's history of chat 42 (newest first)
history=$(node --input-type=module -e "
import { openWs } from '$H_ROOT/tests/harness/ws_client.mjs';
import { token } from '$H_ROOT/tests/harness/jwt.mjs';
const ws = openWs('ws://127.0.0.1:$DAEMON_PORT/ws?token=' + token([42], { sub: 'reader' }));
await ws.opened;
const answer = await ws.ask({ type: 'history', chat_id: 42 });
console.log(JSON.stringify((answer.messages ?? []).map((m) => m.sender)));
ws.close();")
expect_eq "senders in a /ws history" '[null,"alice",null]' "$history"

# the grants carried over
expect_eq "app may still send" "t|t" "$(q "SELECT has_function_privilege('app', 'consumers.send_message(bigint, text, text)', 'EXECUTE'),
	has_function_privilege('app', 'later.send_message(bigint, text, text)', 'EXECUTE')")"
expect_eq "recv may store senders" "t" "$(q "SELECT has_column_privilege('recv', 'workers.inbox', 'sender', 'INSERT')")"

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
		WHERE c.relnamespace::regnamespace::text IN ('consumers', 'workers', 'later') AND c.relkind = 'r'
			AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY 1"
}
schema "$PGURL" >"$H_DIR/schema.updated"
schema "$fresh_url" >"$H_DIR/schema.fresh"
diff -u "$H_DIR/schema.fresh" "$H_DIR/schema.updated" || fail "the updated schema differs from a fresh 1.1 install's"
echo "ok   the updated schema equals a fresh install's ($(wc -l <"$H_DIR/schema.fresh") functions and columns)"
echo "PASS"
