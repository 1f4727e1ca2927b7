#!/usr/bin/env bash
# consumer.security: the daemon runs as its service's own database role and as a Redis ACL user.
#   - Redis with requirepass (the relay authenticates with a password in chat_outbox.redis_url) and an
#     ACL user limited to bull:* keys whose password needs percent-encoding in the URL;
#   - Postgres role workers_app given only its schema by chat_outbox.grant_service(receiver => true);
#   - messages flow consumers -> workers through the daemon, a client `send` works as workers_app,
#     and that role is refused the other service's tables;
#   - a wrong Redis password: the daemon keeps running, reports unhealthy, and never logs a password;
#   - a --jwt-secret shorter than 32 bytes (flag or environment) stops the start with exit 2 and an
#     error that does not show it;
#   - a --prefix or --queue BullMQ cannot use (empty, or with ':') stops the start with exit 2 and an
#     error naming it, as the relay refuses such a prefix or queue;
#   - with --jwt-audience and --jwt-issuer, clients of both protocols are refused a token without the
#     matching aud / iss and accepted with it.
. "$(dirname "$0")/../harness/lib.sh"
harness_init daemon-security
# A short secret is refused before any connection is tried, so no server is needed yet.
SHORT_SECRET=short-secret-31-bytes-long-xyz!
for how in flag env; do
	set +e
	if [ $how = flag ]; then
		timeout 20 "$CHAT_OUTBOXD" --service workers --jwt-secret "$SHORT_SECRET" >"$H_DIR/short-$how.log" 2>&1
	else
		CHAT_OUTBOXD_JWT_SECRET=$SHORT_SECRET timeout 20 "$CHAT_OUTBOXD" --service workers >"$H_DIR/short-$how.log" 2>&1
	fi
	rc=$?
	set -e
	expect_eq "31-byte secret by $how: exit code" 2 "$rc"
	expect_eq "31-byte secret by $how: the error" "chat-outboxd: --jwt-secret must be 32 bytes or more" \
		"$(cat "$H_DIR/short-$how.log")"
	if grep -qF "short-secret" "$H_DIR/short-$how.log"; then
		echo "FAIL: the short secret reached the output" >&2
		exit 1
	fi
done

# So is a key prefix or queue name BullMQ cannot split its keys by.
NAME_RULE="(BullMQ joins and splits its keys on ':', so a prefix or queue name must be non-empty and have no ':')"
for bad in '--prefix|a:b|"a:b" contains '"':'" '--prefix||is empty' '--queue|chat:messages|"chat:messages" contains '"':'" \
	'--queue||is empty'; do
	IFS='|' read -r flag value why <<<"$bad"
	set +e
	timeout 20 "$CHAT_OUTBOXD" --service workers --jwt-secret "$SHORT_SECRET-and-then-some" "$flag" "$value" \
		>"$H_DIR/bad-name.log" 2>&1
	rc=$?
	set -e
	expect_eq "$flag '$value': exit code" 2 "$rc"
	expect_eq "$flag '$value': the error" "chat-outboxd: $flag $why $NAME_RULE" "$(cat "$H_DIR/bad-name.log")"
done

REDIS_PORT=$(harness_free_port)
REDIS_EXTRA_ARGS="--requirepass adminpw"
REDIS_CLI_AUTH="-a adminpw --no-auth-warning"
REDIS_URL="redis://:adminpw@127.0.0.1:$REDIS_PORT"
harness_redis_start "$REDIS_PORT"
rcli ACL SETUSER chatd on '>p@ss:w/rd' '~bull:*' '&*' '+@all' >/dev/null
harness_pg_start
harness_psql "CREATE ROLE workers_app LOGIN; SELECT chat_outbox.grant_service('workers', 'workers_app', receiver => true)" >/dev/null
APP_URL="postgresql://workers_app@127.0.0.1:$PG_PORT/chat"
daemon_export_settings

daemon_start daemon.log --service workers --queue chat-messages --database-url "$APP_URL" \
	--redis-url "redis://chatd:p%40ss%3Aw%2Frd@127.0.0.1:$REDIS_PORT/0" \
	--jwt-audience chat-clients --jwt-issuer chat-backend
daemon_wait_consuming daemon.log
harness_psql "SELECT count(consumers.send_message(5, 'secure ' || g)) FROM generate_series(1, 20) g" >/dev/null
wait_inbox workers 20 30
expect_eq "messages through the ACL user and the service role" 20 "$(inbox_count workers)"

sent=$(cd "$H_ROOT/tests" && node --input-type=module -e "
	import { io } from 'socket.io-client';
	import { token } from './harness/jwt.mjs';
	const s = io('$DAEMON_URL', { auth: { token: token([5], { aud: ['other', 'chat-clients'], iss: 'chat-backend' }) }, transports: ['websocket'] });
	const ack = await s.timeout(10000).emitWithAck('send', { chat_id: 5, body: 'from a client' });
	console.log(ack.ok ? 'ok' : JSON.stringify(ack.error));
	s.close();")
expect_eq "client send runs workers.send_message as workers_app" ok "$sent"
expect_eq "stored as workers' message" 1 "$(harness_psql "SELECT count(*) FROM workers.messages WHERE body = 'from a client'")"
# tokens without the audience or issuer the daemon was told: refused by Socket.IO and by /ws; /ws
# welcomes one with both (the Socket.IO client above had both)
refusals=$(cd "$H_ROOT/tests" && node --input-type=module -e "
	import { io } from 'socket.io-client';
	import WebSocket from 'ws';
	import { token } from './harness/jwt.mjs';
	const sign = (claims) => token([5], claims);
	const viaSocketIo = (token) => new Promise((done) => {
		const s = io('$DAEMON_URL', { auth: { token }, transports: ['websocket'], reconnection: false });
		s.on('connect', () => { s.close(); done('connected'); });
		s.on('connect_error', (e) => { s.close(); done(e.message + ': ' + e.data?.reason); });
	});
	const viaWs = (token) => new Promise((done) => {
		const ws = new WebSocket('ws://127.0.0.1:$DAEMON_PORT/ws?token=' + token);
		ws.on('message', (m) => { done(JSON.parse(m).type); ws.close(); });
		ws.on('close', (code, reason) => done(code + ': ' + reason));
		ws.on('error', () => {});
	});
	const timer = setTimeout(() => { console.log('timed out'); process.exit(1); }, 20000);
	console.log(await viaSocketIo(sign({ iss: 'chat-backend' })));
	console.log(await viaSocketIo(sign({ aud: 'billing', iss: 'chat-backend' })));
	console.log(await viaWs(sign({ aud: 'chat-clients', iss: 'someone-else' })));
	console.log(await viaWs(sign({ aud: 'chat-clients' })));
	console.log(await viaWs(sign({ aud: 'chat-clients', iss: 'chat-backend' })));
	clearTimeout(timer);")
expect_eq "tokens refused for their aud / iss" "unauthorized: aud missing
unauthorized: wrong aud
4401: unauthorized: wrong iss
4401: unauthorized: iss missing
welcome" "$refusals"

denied=$(psql -XAtq "$APP_URL" -c "SELECT count(*) FROM consumers.messages" 2>&1 || true)
case "$denied" in *"permission denied"*) echo "ok: workers_app is refused consumers.messages" ;;
*) fail "workers_app read consumers.messages: $denied" ;; esac

# wrong password: no crash, unhealthy, the password never reaches the log
daemon_start bad.log --service workers --queue chat-messages --database-url "$APP_URL" \
	--redis-url "redis://chatd:not-the-password@127.0.0.1:$REDIS_PORT/0" --identity wrong-password
harness_wait_for 20 grep -qi "redis.*unreachable" "$H_DIR/bad.log"
code=$(curl -s -o /dev/null -w '%{http_code}' "$DAEMON_URL/healthz")
expect_eq "healthz with a refused Redis login" 503 "$code"
kill -0 "$DAEMON_PID" && echo "ok: still running, retrying with backoff"
if grep -q "not-the-password\|p@ss\|adminpw\|$CHAT_OUTBOXD_JWT_SECRET" "$H_DIR/bad.log" "$H_DIR/daemon.log"; then
	fail "a password or the JWT secret reached a log line"
fi
echo "ok: no password or JWT secret in the logs"
echo PASS
