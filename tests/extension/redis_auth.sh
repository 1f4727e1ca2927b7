#!/usr/bin/env bash
# tests/extension/redis_auth.sh - the relay logs in the way chat_outbox.redis_url says.
#   requirepass + db 3; an ACL user + db 2 after a SIGHUP reload; a wrong password keeps rows in
#   the outbox, shows the AUTH error in chat_outbox.status and never prints the password.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-redis-auth
REDIS_PORT=$(harness_free_port)
REDIS_EXTRA_ARGS="--requirepass s3cret"
REDIS_CLI_AUTH="-a s3cret --no-auth-warning"
REDIS_URL="redis://:s3cret@127.0.0.1:$REDIS_PORT/3"
harness_redis_start "$REDIS_PORT"
harness_pg_start

waiting_in() { [ "$(rcli -n "$1" LLEN bull:chat-messages:wait)" -eq "$2" ]; }
send() { for i in $(seq "$1"); do harness_psql "SELECT consumers.send_message(1, 'auth $i')" >/dev/null; done; }
set_url() { harness_psql "ALTER SYSTEM SET chat_outbox.redis_url = '$1'" && harness_psql "SELECT pg_reload_conf()" >/dev/null; }

send 3
harness_wait_for 20 waiting_in 3 3
[ "$(rcli -n 0 DBSIZE)" -eq 0 ] || fail "jobs leaked into db 0"
echo "ok   requirepass, SELECT 3: 3 jobs in db 3"

rcli ACL SETUSER relay on '>relaypw' '~*' '&*' '+@all' >/dev/null
set_url "redis://relay:relaypw@127.0.0.1:$REDIS_PORT/2"
send 2
harness_wait_for 20 waiting_in 2 2
echo "ok   ACL user relay, SELECT 2: 2 jobs in db 2 after reload"

set_url "redis://relay:wrongpw@127.0.0.1:$REDIS_PORT/2"
send 1
auth_refused() { relay_status last_error | grep AUTH >/dev/null; }
harness_wait_for 20 auth_refused
[ "$(relay_status unsent)" -eq 1 ] || fail "the row should wait in the outbox"
echo "ok   wrong password: $(relay_status relay_state), last_error: $(relay_status last_error)"
set_url "redis://relay:relaypw@127.0.0.1:$REDIS_PORT/2"
harness_wait_for 20 waiting_in 2 3
echo "ok   fixed password: the waiting row arrived"
# (PG 15's postmaster itself logs "parameter ... changed to ..." with the new value on reload;
# that line is not ours. Every line the relay writes must be free of passwords.)
if grep "chat_outbox relay" "$H_DIR/postgres.log" | grep -e s3cret -e relaypw -e wrongpw >/dev/null; then
	fail "the relay logged a password"
fi
echo "ok   no password in the relay's log lines"
