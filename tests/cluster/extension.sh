#!/usr/bin/env bash
# tests/cluster/extension.sh - the extension's relay (the background worker inside Postgres) on a Redis
# Cluster (chat_outbox.redis_url = 'redis-cluster://...'): the scenario of cluster.relay (relay.mjs: 3
# masters and 3 replicas, one service of 6 partitions spread over the masters, real bullmq Workers on
# ioredis Cluster connections, 12 chats sending; a master SIGKILLed mid-stream, then a reshard under
# traffic; lost, twice and out of order counted, the gap recorded), with the relay in Postgres; then a
# terminate request while the relay waits for a hung cluster ends it at once, not after the timeout, and
# chat_outbox.status names the hung master until the masters go on and the rows flow.
. "$(dirname "$0")/../harness/lib.sh"
harness_init cluster-extension
cluster_start
REDIS_URL=$CLUSTER_URL
# WAIT for one replica on every master a pass wrote to: what the dead master alone held goes again
harness_pg_start "" "chat_outbox.redis_min_replicas = 1" "chat_outbox.redis_timeout = 1000"
export REDIS_URL PGURL H_DIR
harness_psql "SELECT chat_outbox.set_partitions('consumers', 6)" >/dev/null
cd "$H_ROOT/tests" && node cluster/relay.mjs
grep "chat_outbox relay: redis cluster:" "$H_DIR/postgres.log" | sed 's/^.*chat_outbox relay: //'
cluster_relay_followed "$H_DIR/postgres.log"
# what chat_outbox.status said of the cluster while the master was down, once per change
grep -E "chat_outbox relay: redis (unreachable|back)" "$H_DIR/postgres.log" | sed 's/^.*chat_outbox relay: //' | head -5

# A terminate request cuts the relay's wait for a hung cluster short (the blocking connections' interrupt
# check, common/redis_blocking.hpp), not after chat_outbox.redis_timeout: a 30 s timeout, every master
# SIGSTOPped, a send; once the relay's request lies unread in a stopped master's socket (its connections
# are the masters' normal clients, found by CLIENT LIST before the stop; ss shows the unread bytes),
# pg_terminate_backend.
harness_psql "ALTER SYSTEM SET chat_outbox.redis_timeout = '30s'" && harness_psql "SELECT pg_reload_conf()" >/dev/null
harness_psql "SELECT consumers.send_message(1, 'before the hang')" >/dev/null # the new router's connections made
harness_wait_for 20 bash -c "[ \"\$(psql -XAtq '$PGURL' -c 'SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL')\" = 0 ]"
masters=$(cluster_masters)
relay_ports=$(for p in $masters; do ccli "$p" CLIENT LIST | grep ' flags=N ' | grep -v 'cmd=client' | sed 's/.* addr=[^ ]*:\([0-9]*\) .*/\1/'; done)
[ -n "$relay_ports" ] || fail "no connection of the relay to the masters"
for p in $masters; do kill -STOP "$(cat "$H_DIR/node-$p/redis.pid")"; done
harness_psql "SELECT consumers.send_message(1, 'during the hang')" >/dev/null
request_unread() { # a master's socket of a relay connection holds bytes its (stopped) server has not read
	ss -tnH state established | awk -v m=" $(echo $masters) " -v r=" $(echo $relay_ports) " \
		'{ split($3, l, ":"); split($4, p, ":"); if ($1 > 0 && index(m, " " l[2] " ") && index(r, " " p[2] " ")) found = 1 } END { exit !found }'
}
harness_wait_for 20 request_unread
worker=$(harness_psql "SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'")
# the 1 s timeout again before the terminate: the waiting worker reads settings only between passes (it keeps its
# 30 s), and the worker started after it (bgw_restart_time) must start with 1 s, or its first wait on a stopped
# seed lasts 30 s (seen on Valkey under load: restarted before the reload, the status never changed in 30 s)
harness_psql "ALTER SYSTEM SET chat_outbox.redis_timeout = 1000" && harness_psql "SELECT pg_reload_conf()" >/dev/null
t0=$(date +%s%N)
harness_psql "SELECT pg_terminate_backend($worker)" >/dev/null
# looked at every 10 ms (harness_wait_for's pauses grow to 400 ms), for at most 30 s
for ((i = 0; i < 3000; i++)); do kill -0 "$worker" 2>/dev/null || break; sleep 0.01; done
ms=$((($(date +%s%N) - t0) / 1000000))
echo "the relay worker, waiting for a hung cluster with a 30 s timeout, ended ${ms} ms after pg_terminate_backend"
# chat_outbox.status names the cluster's problem and its node: the restarted worker, with the 1 s timeout
status() { harness_psql "SELECT last_error FROM chat_outbox.status WHERE service = 'consumers'"; }
harness_wait_for 30 bash -c "psql -XAtq '$PGURL' -c \"SELECT last_error FROM chat_outbox.status WHERE service = 'consumers'\" | grep -q 'redis cluster: master 127.0.0.1:[0-9]*: .*timed out'" ||
	fail "chat_outbox.status does not name the hung master: $(status)"
echo "chat_outbox.status while every master hangs: $(status)"
for p in $masters; do kill -CONT "$(cat "$H_DIR/node-$p/redis.pid")"; done
harness_wait_for 30 bash -c "[ \"\$(psql -XAtq '$PGURL' -c 'SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL')\" = 0 ]" ||
	fail "the rows sent during the hang were not relayed once the masters went on"
# the wait itself ends within kInterruptSliceMs; the bound leaves room for the process's exit on a busy machine
[ "$ms" -le 3000 ] || fail "the relay worker took ${ms} ms to end on a terminate request (bound 3000 ms, timeout 30 s)"
