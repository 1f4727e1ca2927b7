#!/usr/bin/env bash
# tests/cluster/tls_extension.sh - the extension's relay (the background worker inside Postgres) on a
# Redis Cluster whose nodes speak only TLS (chat_outbox.redis_url = 'rediss-cluster://...', one seed:
# the other masters reached where CLUSTER SLOTS says, verified by their announced address), chat-outboxd
# consuming on the same URL:
#   1. every message once, in send order per chat, every master holding partitions;
#   2. a wrong CA (a reload): rows wait, chat_outbox.status says why, the log once, not per retry; the
#      right CA (a reload) and the waiting rows flow, once, in order.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/sent_once.sh"
. "$(dirname "$0")/../harness/tls_ca.sh"
harness_init cluster-tls-extension
cluster_tls_start "IP:127.0.0.1"
REDIS_URL=$GOOD
harness_pg_start "" "chat_outbox.redis_timeout = 1000"
export REDIS_URL PGURL
daemon_export_settings
harness_psql "SELECT chat_outbox.set_partitions('consumers', 6)" >/dev/null
harness_psql "SELECT chat_outbox.set_partitions('workers', 6)" >/dev/null

set_url() { harness_psql "ALTER SYSTEM SET chat_outbox.redis_url = '$1'" >/dev/null && harness_psql "SELECT pg_reload_conf()" >/dev/null; }
error_has() { relay_status last_error | grep -E "$1" >/dev/null; }
log_count() { grep -c -E "redis unreachable: .*($1)" "$H_DIR/postgres.log" || true; }

# 1. the extension's relay and chat-outboxd over TLS to every node
daemon_start workers.log --service workers --queue chat-messages
daemon_wait_consuming workers.log
sent_once_send 30
sent_once_verify "the extension's relay over rediss-cluster://"
for m in $(cluster_masters); do
	[ "$(ccli "$m" DBSIZE)" -gt 0 ] || fail "master $m holds no key: the relay did not reach it over TLS"
done
echo "ok   the extension's relay over rediss-cluster:// (one seed, masters $(cluster_masters | tr '\n' ' ')): $sent messages once, in order"

# 2. a wrong CA by a reload: rows wait, status and log (once) say why; the right CA by a reload flows
set_url "$WRONG"
sent_once_send 5
pattern="certificate verify failed: self-signed certificate in certificate chain"
harness_wait_for 30 error_has "$pattern"
harness_wait_for 10 relay_unsent_is 5
sleep 1.5 # a few more retries (the backoff starts at 100 ms): still one line
expect_eq "wrong CA: log lines" 1 "$(log_count "$pattern")"
echo "ok   wrong CA: rows wait, status says: $(relay_status last_error)"
set_url "$GOOD"
harness_wait_for 30 relay_unsent_is 0
sent_once_verify "fixed by a reload"
