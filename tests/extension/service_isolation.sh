#!/usr/bin/env bash
# tests/extension/service_isolation.sh - one service that cannot be relayed never holds back the others.
#   Service aaa_broken has lost its outbox table (SQL fails), aab_gone its whole schema, service
#   billing's queue keys are outside the relay's Redis ACL (NOPERM); all come before consumers and
#   workers in the relay's order. Every message of consumers and workers still reaches Redis; each broken service says why
#   in chat_outbox.status.service_error, is logged once, and relays again once it is fixed. Consumers'
#   commit -> Redis latency beside the broken services is printed beside the same once all are healthy.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-service-isolation
harness_redis_start
# The relay is the ACL user from its first pass: set by a reload instead, billing's message could go out
# under the default user before the worker read the new URL, and nothing would be refused.
rcli ACL SETUSER relay on '>relaypw' '~bull:chat-messages:*' '~bull:chat-replies:*' '&*' '+@all' >/dev/null
harness_pg_start "" "chat_outbox.redis_url = 'redis://relay:relaypw@127.0.0.1:$REDIS_PORT'"

status() { q "SELECT $2 FROM chat_outbox.status WHERE service = '$1'"; }
waiting() { [ "$(rcli LLEN "bull:$1:wait")" -eq "$2" ]; }

q "SELECT chat_outbox.create_service('aaa_broken')" >/dev/null
q "SELECT chat_outbox.create_service('billing', queue => 'billing-messages')" >/dev/null
q "SELECT billing.send_message(1, 'invoice')" >/dev/null
q "DROP TABLE aaa_broken.outbox_events CASCADE"
q "SELECT chat_outbox.create_service('aab_gone')" >/dev/null
q "DROP SCHEMA aab_gone CASCADE"

for i in $(seq 20); do
	q "SELECT consumers.send_message(1, 'c $i')" >/dev/null
	q "SELECT workers.send_message(2, 'w $i')" >/dev/null
done
harness_wait_for 60 waiting chat-messages 20 || fail "consumers: $(rcli LLEN bull:chat-messages:wait) of 20 in Redis"
harness_wait_for 60 waiting chat-replies 20 || fail "workers: $(rcli LLEN bull:chat-replies:wait) of 20 in Redis"
echo "ok   consumers and workers relayed 20 messages each beside three broken services"

# consumers' commit -> job in Redis beside the broken services, printed (never asserted) beside the same
# measurement once every service is healthy again (at the end)
latency() { # latency <label>: 300 paced sends of consumers through bench/relay/latency.mjs, every one seen
	local r
	r=$(cd "$H_ROOT/tests" && REDIS_URL=$REDIS_URL PGURL=$PGURL node "$H_ROOT/bench/relay/latency.mjs" 300 5)
	python3 - "$1" "$r" <<'PY' || fail "latency: $r"
import json, sys
r = json.loads(sys.argv[2]); m = r["commit_ack_to_visible_ms"]
assert r["sent"] == r["seen"] == 300, r
print(f"     consumers, commit ack -> job in Redis, {sys.argv[1]}: p50 {m['p50']} ms, p95 {m['p95']} ms, p99 {m['p99']} ms")
PY
}
latency "beside three broken services"

has_error() { [[ "$(status "$1" service_error)" == *"$2"* ]]; }
harness_wait_for 30 has_error billing NOPERM || fail "billing service_error: '$(status billing service_error)'"
harness_wait_for 30 has_error aaa_broken 'does not exist' || fail "aaa_broken service_error: '$(status aaa_broken service_error)'"
harness_wait_for 30 has_error aab_gone 'schema "aab_gone" does not exist' || fail "aab_gone service_error: '$(status aab_gone service_error)'"
[ "$(status billing unsent)" -eq 1 ] || fail "billing's row should wait in its outbox"
[ -z "$(status consumers service_error)" ] || fail "consumers has an error: $(status consumers service_error)"
# a relay that cannot relay a service is not running for it; for the others it is
expect_eq "billing's service_state" failing "$(status billing service_state)"
expect_eq "aab_gone's service_state" failing "$(status aab_gone service_state)"
expect_eq "consumers' service_state" running "$(status consumers service_state)"
[ -z "$(status aaa_broken unsent)" ] || fail "aaa_broken has no outbox, yet unsent is $(status aaa_broken unsent)"
echo "ok   status: billing: $(status billing service_error); aaa_broken: $(status aaa_broken service_error)"

sleep 3 # several retries with backoff: still one line per broken service
for svc in billing aaa_broken aab_gone; do
	n=$(grep -c "service \"$svc\" cannot be relayed" "$H_DIR/postgres.log" || true)
	[ "$n" -eq 1 ] || fail "$svc logged $n times"
done
echo "ok   each broken service logged once"

rcli ACL SETUSER relay '~bull:billing-messages:*' >/dev/null
harness_wait_for 30 waiting billing-messages 1 || fail "billing's row did not arrive after the fix"
harness_wait_for 10 bash -c "[ -z \"\$(psql -XAtq '$PGURL' -c \"SELECT service_error FROM chat_outbox.status WHERE service = 'billing'\")\" ]"
grep -q 'service "billing" relays again' "$H_DIR/postgres.log" || fail "no recovery line for billing"
echo "ok   billing relays again once its keys are allowed"

q "DELETE FROM chat_outbox.services WHERE name IN ('aaa_broken', 'aab_gone')"
latency "every service healthy"
echo PASS
