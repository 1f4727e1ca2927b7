#!/usr/bin/env bash
# tests/extension/status.sh - what an operator sees and controls.
#   chat_outbox.status (state, pid, last relayed id), the one-time warning for a Redis without
#   AOF / with eviction, Redis' appendfsync, the pause switch, polling with the wake-up off, queue and prefix changes
#   picked up live, retention of sent rows, and a quiet worker while the extension is dropped.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init extension-status
REDIS_EXTRA_ARGS="--appendonly no --maxmemory-policy allkeys-lru"
harness_redis_start
harness_pg_start "" "chat_outbox.retention = '2s'"

status_is() { [ "$(relay_status "$1")" = "$2" ]; }
send() { for i in $(seq "$1"); do q "SELECT consumers.send_message(1, 'status $i')" >/dev/null; done; }
setting() { q "ALTER SYSTEM SET chat_outbox.$1 = '$2'" && q "SELECT pg_reload_conf()" >/dev/null; }

send 5
harness_wait_for 20 status_is unsent 0
[ "$(relay_status relay_state)" = running ] || fail "state $(relay_status relay_state)"
[ "$(relay_status worker_pid)" = "$(q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'")" ] || fail "worker_pid"
# the relay publishes its last id in shared memory right after its commit, so a reader may see the
# rows sent a moment before it sees the id. The highest id is the sequence's: retention (2 s here) may
# already have deleted the sent rows.
last_id=$(q "SELECT last_value FROM pg_sequences WHERE schemaname = 'consumers' AND sequencename = 'outbox_id_seq'")
last_id_is_max() { [ "$(relay_status last_relayed_id)" = "$last_id" ]; }
harness_wait_for 10 last_id_is_max || fail "last_relayed_id $(relay_status last_relayed_id), last outbox id $last_id"
[ "$(relay_status "last_relayed_at IS NOT NULL")" = t ] || fail "last_relayed_at"
echo "ok   status: $(q "SELECT service, unsent, relay_state, last_relayed_id FROM chat_outbox.status WHERE service = 'consumers'")"

warning=$(relay_status redis_warning)
[[ "$warning" == *appendonly* && "$warning" == *maxmemory-policy* ]] || fail "redis_warning: '$warning'"
rcli CLIENT KILL TYPE normal >/dev/null # the relay reconnects and sees the same configuration
send 1
harness_wait_for 20 status_is unsent 0
[ "$(grep -c 'redis is not durable' "$H_DIR/postgres.log")" -eq 1 ] || fail "warning not logged exactly once"
echo "ok   warned once: $warning"
[ "$(relay_status redis_appendfsync)" = everysec ] || fail "redis_appendfsync: '$(relay_status redis_appendfsync)'"
rcli CONFIG SET appendfsync no >/dev/null
rcli CLIENT KILL TYPE normal >/dev/null # read again at the next connect
send 1
harness_wait_for 20 status_is redis_appendfsync no
[[ "$(relay_status redis_warning)" != *appendfsync* ]] || fail "appendfsync warned while appendonly is off"
rcli CONFIG SET appendfsync everysec >/dev/null
echo "ok   redis_appendfsync follows Redis: everysec, then no"

# A connection found closed when a pass reads its marks is no outage, as one found closed by a batch is
# not: the read goes once more on a new connection (common/relay/redis_server_link.hpp). Passes run
# only when woken here (the poll interval an hour), so each step below is one pass: consumers' batch
# meets a closed connection and makes a new one, which makes workers' next pass read its marks first,
# on a connection closed again.
setting poll_interval 3600000
harness_wait_value 10 = 3600000 q "SELECT setting FROM pg_settings WHERE name = 'chat_outbox.poll_interval'"
unsent_of() { q "SELECT unsent FROM chat_outbox.status WHERE service = '$1'"; }
outages=$(grep -c 'redis unreachable' "$H_DIR/postgres.log" || true)
send 1
harness_wait_value 20 -eq 0 unsent_of consumers
rcli CLIENT KILL TYPE normal >/dev/null
send 1
harness_wait_value 20 -eq 0 unsent_of consumers
rcli CLIENT KILL TYPE normal >/dev/null
q "SELECT workers.send_message(1, 'status after a closed connection')" >/dev/null
harness_wait_value 20 -eq 0 unsent_of workers
now=$(grep -c 'redis unreachable' "$H_DIR/postgres.log" || true)
[ "$now" -eq "$outages" ] || fail "a closed connection was logged as an outage: $(grep 'redis unreachable' "$H_DIR/postgres.log" | tail -1)"
setting poll_interval 1000
echo "ok   a connection closed under a batch, then under a marks' read: both went again, no outage logged"

setting relay_enabled off
harness_wait_for 10 status_is relay_state paused
send 3
sleep 1.5 # two poll intervals: a paused relay must not have moved them
[ "$(relay_status unsent)" -eq 3 ] || fail "paused relay sent rows"
setting relay_enabled on
harness_wait_for 20 status_is unsent 0
echo "ok   pause switch: rows waited, then went"

setting wake_at_commit off
send 2
harness_wait_for 20 status_is unsent 0
setting wake_at_commit on
echo "ok   wake_at_commit off: the poll timer relays"

q "UPDATE chat_outbox.services SET queue = 'renamed' WHERE name = 'consumers'"
send 1
harness_wait_value 20 -eq 1 rcli LLEN bull:renamed:wait
setting bullmq_prefix other
send 1
harness_wait_value 20 -eq 1 rcli LLEN other:renamed:wait
echo "ok   queue and prefix changes picked up live"

# a plain INSERT into an outbox is relayed too; a payload without a usable id gets a stable fallback id
oid=$(q "INSERT INTO consumers.outbox (event, payload) VALUES ('custom.event', '{\"id\": 42, \"n\": 1}') RETURNING id")
harness_wait_value 20 = custom.event rcli HGET "other:renamed:outbox-consumers-$oid" name
echo "ok   plain outbox INSERT relayed as job outbox-consumers-$oid"

harness_wait_value 30 -eq 0 q "SELECT count(*) FROM consumers.outbox"
[ "$(q "SELECT count(*) FROM consumers.messages")" -eq 16 ] || fail "retention touched messages"
echo "ok   retention: sent outbox rows deleted, messages kept"

errors_before=$(grep -c ERROR "$H_DIR/postgres.log" || true)
q "DROP EXTENSION chat_outbox CASCADE"
sleep 2.5 # the worker polls every second; it must stay quiet
[ "$(grep -c ERROR "$H_DIR/postgres.log" || true)" -eq "$errors_before" ] || fail "errors logged while the extension was dropped"
q "CREATE EXTENSION chat_outbox"
send 1
harness_wait_for 20 status_is unsent 0
echo "ok   dropped extension: worker idled quietly, resumed after CREATE EXTENSION"
