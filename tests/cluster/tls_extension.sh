#!/usr/bin/env bash
# tests/cluster/tls_extension.sh - the extension's relay (the background worker inside Postgres) on a
# Redis Cluster whose nodes speak only TLS (chat_outbox.redis_url = 'rediss-cluster://...', one seed:
# the other masters reached where CLUSTER SLOTS says, verified by their announced address), chat-outboxd
# consuming on the same URL:
#   1. every message once, in send order per chat, every master holding partitions;
#   2. a wrong CA (a reload): rows wait, chat_outbox.status says why, the log once, not per retry; the
#      right CA (a reload) and the waiting rows flow, once, in order;
#   3. a bad certificate on every node (CONFIG SET tls-cert-file, the relay's connections cut): an expired
#      one, one naming another host (no sni=); and a plaintext node behind rediss-cluster:// (a reload):
#      each the same (rows wait, status, the log once), and each fixed (the good certificate back on the
#      nodes, no reload; the good URL by a reload) flows, once, in order; an expired certificate on one
#      master only, one the URL does not name: its chats' rows wait, status and log say why, then flow;
#   4. real bullmq Workers on ioredis Cluster connections over TLS, one per partition queue
#      ({chat-messages-p<p>}), in place of chat-outboxd, while 12 chats send: a master SIGKILLed
#      mid-stream, then a reshard under traffic (cluster/relay.mjs): nothing lost, twice or out of order,
#      the gaps printed.
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

# 3. bad certificates on the nodes, and a plaintext node behind the URL
tls_cert ca expired "IP:127.0.0.1" expired
tls_cert ca elsewhere "DNS:elsewhere.internal" # names no node's address
chmod -R a+rX "$TLS_DIR"
# bad_case <what> <error pattern> <how it breaks...>: rows wait, status and the log (once) say why;
# then the good certificate on the nodes and the good URL, and the rows flow
bad_case() {
	local what=$1 pattern=$2
	"${@:3}"
	sent_once_send 5
	harness_wait_for 30 error_has "$pattern"
	harness_wait_for 10 relay_unsent_is 5
	sleep 1.5 # a few more retries (the backoff starts at 100 ms): still one line
	expect_eq "$what: log lines" 1 "$(log_count "$pattern")"
	echo "ok   $what: rows wait, status says: $(relay_status last_error)"
	cluster_node_certs node
	set_url "$GOOD"
	harness_wait_for 30 relay_unsent_is 0
	sent_once_verify "$what fixed"
}
certs_cut() { cluster_node_certs "$1" && cluster_clients_cut; }
bad_case "an expired certificate on every node" "certificate verify failed: certificate has expired" certs_cut expired
bad_case "a certificate naming another host on every node (no sni=)" "certificate verify failed: IP address mismatch" certs_cut elsewhere
# an expired certificate on one master only, one the URL does not name: its chats' rows wait (a pass that
# meets it fails whole, so others may wait too), the status and the log (once more) say why; replaced, all flows
bad=$(cluster_other_master "{chat-messages-p1}" "{chat-messages-p2}" "{chat-messages-p3}")
[ -n "$bad" ] || fail "chats 1-3's queues are all on the seed: no other master to break"
bad_chats=$(sent_once_chats_on "$bad")
expired="certificate verify failed: certificate has expired"
before=$(log_count "$expired") first=$sent
cluster_node_cert "$bad" expired
cluster_clients_cut
sent_once_send 5
harness_wait_for 30 error_has "$expired"
harness_wait_value 30 -gt "$before" log_count "$expired"
sleep 1.5 # a few more retries, as bad_case: still one line more
expect_eq "an expired certificate on one master: log lines" $((before + 1)) "$(log_count "$expired")"
sent_once_absent "messages of chats $bad_chats (on master :$bad) stored while its certificate is expired" "$first" "$bad_chats"
[ "$(relay_status unsent)" -gt 0 ] || fail "no row waits for master :$bad"
echo "ok   an expired certificate on master :$bad only (seed :$SEED): chats $bad_chats wait; status says: $(relay_status last_error)"
cluster_node_certs node
harness_wait_for 30 relay_unsent_is 0
sent_once_verify "one master's certificate replaced"

tls_plain_redis
bad_case "a plaintext node behind rediss-cluster://" "speak TLS on this port" \
	set_url "rediss-cluster://127.0.0.1:$PLAIN_PORT?cacert=$TLS_DIR/ca.crt"
kill "$(cat "$H_DIR/plain.pid")"

# 4. bullmq Workers over TLS in place of chat-outboxd, a master's SIGKILL and a reshard under traffic; the
# relay waits for one replica on every master a pass wrote to (what the dead master alone held goes again)
harness_stop_pid "$DAEMON_PID"
harness_psql "ALTER SYSTEM SET chat_outbox.redis_min_replicas = 1" >/dev/null
harness_psql "SELECT pg_reload_conf()" >/dev/null
export H_DIR
(cd "$H_ROOT/tests" && node cluster/relay.mjs)
cluster_relay_followed "$H_DIR/postgres.log"
