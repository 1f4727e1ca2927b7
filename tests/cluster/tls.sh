#!/usr/bin/env bash
# tests/cluster/tls.sh - rediss-cluster://: chat-outbox-relay and chat-outboxd on a Redis Cluster whose
# nodes speak only TLS (3 masters, 3 replicas, no plaintext port, the cluster bus and replication over
# TLS too; tests/harness/redis_cluster.sh with CLUSTER_TLS), certificates of the test's own CA.
# The URL names one seed node only, so the other masters are reached where CLUSTER SLOTS says, by
# their announced address (127.0.0.1), which their certificate names as an IP SAN.
#   1. send_message -> chat-outbox-relay -> the partitions' queues on every master -> chat-outboxd ->
#      workers.inbox: every message once, in send order per chat; every master holds partitions.
#   2. A wrong CA for each process (restarted with it): rows wait, the error is in the relay's status
#      and in each log, logged once, not per retry; a restart with the right CA and everything flows,
#      once, in order.
#   3. sni=: one name checked on every node instead of its address: the shared name flows, another
#      name is a clear error (hostname mismatch) while rows wait.
#   4. A bad certificate on every node (CONFIG SET tls-cert-file, so the cluster's own TLS links stay
#      up; the processes' connections cut, as a network blip would): an expired one, one that names
#      another host (no sni=), and a plaintext node behind rediss-cluster://. Each: rows wait, the
#      error is in the relay's status, in each log once, and the daemon's /healthz says Redis is down;
#      the right certificate back on the nodes (no restart of either process) and the waiting rows flow,
#      once, in order. Then an expired certificate on one master only, one the URL does not name: its
#      chats' rows wait, each log names the certificate (once more), and the rows flow once it is replaced.
#   5. A master SIGKILLed mid-stream and a reshard under traffic, over TLS: cluster/daemon.mjs (three
#      daemons, both directions, socket.io clients) counting lost, stored twice, shown twice and out of
#      order, the gap printed.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/sent_once.sh"
. "$(dirname "$0")/../harness/tls_ca.sh"
harness_init cluster-tls
cluster_tls_start "IP:127.0.0.1,DNS:cluster.internal" # the announced address, and a name all nodes share
REDIS_URL=$GOOD
HARNESS_PG_MANAGED=1 harness_pg_start
export REDIS_URL PGURL
daemon_export_settings
harness_psql "SELECT chat_outbox.set_partitions('consumers', 6)" >/dev/null
harness_psql "SELECT chat_outbox.set_partitions('workers', 6)" >/dev/null


# 1. both processes over TLS to every node
relay_start one --redis-timeout 1000
daemon_start workers.log --service workers --queue chat-messages
WORKERS_PID=$DAEMON_PID
daemon_wait_consuming workers.log
sent_once_send 30
sent_once_verify "over rediss-cluster://"
for m in $(cluster_masters); do
	[ "$(ccli "$m" DBSIZE)" -gt 0 ] || fail "master $m holds no key: the relay did not reach it over TLS"
done
expect_eq "plaintext connections accepted by the nodes" "" "$(for p in $CLUSTER_PORTS; do redis-cli -p "$p" ping 2>/dev/null; done | grep PONG || true)"
echo "ok   chat-outbox-relay and chat-outboxd over rediss-cluster:// (one seed, masters $(cluster_masters | tr '\n' ' ')): $sent messages once, in order"

# 2a. the relay with a wrong CA: rows wait, its status and log say why (once); the right CA flows
harness_stop_pid "$RELAY_PID"
REDIS_URL=$WRONG relay_start two --redis-timeout 1000
sent_once_send 5
error_has() { relay_status last_error | grep -E "$1" >/dev/null; }
harness_wait_for 30 error_has "certificate verify failed: self-signed certificate in certificate chain"
harness_wait_for 10 relay_unsent_is 5
log_steady "$H_DIR/relay-two.log" "certificate verify failed"
echo "ok   relay, wrong CA: rows wait, status: $(relay_status last_error)"
harness_stop_pid "$RELAY_PID"
relay_start three --redis-timeout 1000
harness_wait_for 30 relay_unsent_is 0
sent_once_verify "relay restarted with the right CA"

# 2b. the daemon with a wrong CA: jobs wait in Redis, its log says why (once); the right CA flows
harness_stop_pid "$WORKERS_PID"
CHAT_OUTBOXD_REDIS_URL=$WRONG daemon_start workers-wrong.log --service workers --queue chat-messages
WRONG_PID=$DAEMON_PID
sent_once_send 5
harness_wait_for 30 relay_unsent_is 0 # the relay put them in the cluster
harness_wait_for 30 grep -q "certificate verify failed" "$H_DIR/workers-wrong.log"
log_steady "$H_DIR/workers-wrong.log" "certificate verify failed"
expect_eq "inbox while the daemon cannot reach the cluster" $((sent - 5)) "$(inbox_count workers)"
echo "ok   daemon, wrong CA: $(grep -m1 "certificate verify failed" "$H_DIR/workers-wrong.log" | cut -c1-200)"
harness_stop_pid "$WRONG_PID"
daemon_start workers.log --service workers --queue chat-messages
sent_once_verify "daemon restarted with the right CA"

# 3. sni=: the name all nodes' certificate shares is checked on every master instead of its address
harness_stop_pid "$RELAY_PID"
REDIS_URL="$GOOD&sni=cluster.internal" relay_start sni --redis-timeout 1000
sent_once_send 12
harness_wait_for 30 relay_unsent_is 0
sent_once_verify "sni= naming the nodes' shared name"
harness_stop_pid "$RELAY_PID"
REDIS_URL="$GOOD&sni=other.internal" relay_start sni-wrong --redis-timeout 1000
sent_once_send 5
harness_wait_for 30 error_has "hostname mismatch"
harness_wait_for 10 relay_unsent_is 5
log_steady "$H_DIR/relay-sni-wrong.log" "hostname mismatch"
echo "ok   relay, sni= naming what no node's certificate names: rows wait, status: $(relay_status last_error)"
harness_stop_pid "$RELAY_PID"
relay_start four --redis-timeout 1000
harness_wait_for 30 relay_unsent_is 0
sent_once_verify "relay restarted without the wrong sni"

# 4. bad certificates on the nodes, both processes running on the good URL
tls_cert ca expired "IP:127.0.0.1" expired
tls_cert ca elsewhere "DNS:elsewhere.internal" # names no node's address
chmod -R a+rX "$TLS_DIR"
healthz_redis() { curl -s "$DAEMON_URL/healthz" | grep -q "\"redis\":$1"; }
# bad_certs <what> <certificate> <error pattern>: rows wait, the relay's status, both logs (once, not per
# retry: each pattern is new to the logs) and /healthz say why; the good certificate back: it all flows
bad_certs() {
	cluster_node_certs "$2"
	cluster_clients_cut
	sent_once_send 5
	harness_wait_for 30 error_has "$3"
	harness_wait_for 10 relay_unsent_is 5
	harness_wait_for 30 grep -q -E "$3" "$H_DIR/workers.log"
	harness_wait_for 10 healthz_redis false
	log_steady "$H_DIR/relay-four.log" "$3"
	log_steady "$H_DIR/workers.log" "$3"
	echo "ok   $1 on every node: rows wait, relay status: $(relay_status last_error)"
	echo "ok   $1, the daemon: $(grep -m1 -E "$3" "$H_DIR/workers.log" | cut -c1-220)"
	cluster_node_certs node
	harness_wait_for 30 relay_unsent_is 0
	sent_once_verify "$1 replaced"
	harness_wait_for 10 healthz_redis true
}
bad_certs "an expired certificate" expired "certificate verify failed: certificate has expired"
bad_certs "a certificate naming another host (no sni=)" elsewhere "certificate verify failed: IP address mismatch"

# 4c. an expired certificate on one master only, one that the URL does not name: the slot map still comes
# from the seed, and what fails is the connection CLUSTER SLOTS sends the processes to. The master is
# one holding a queue of chats 1-3 (sent_once_send's): its chats' rows wait. (The cluster is the relay's
# one shard: a pass that meets the master fails whole, so rows of other masters may wait too.)
bad=$(cluster_other_master "{chat-messages-p1}" "{chat-messages-p2}" "{chat-messages-p3}")
[ -n "$bad" ] || fail "chats 1-3's queues are all on the seed: no other master to break"
bad_chats=$(sent_once_chats_on "$bad")
cluster_node_cert "$bad" expired
expired="certificate verify failed: certificate has expired"
logged() { grep -c -E "$expired" "$1" || true; } # 4a logged it too: each log must say it once more
relay_before=$(logged "$H_DIR/relay-four.log") daemon_before=$(logged "$H_DIR/workers.log") first=$sent
cluster_clients_cut
sent_once_send 5
harness_wait_for 30 error_has "$expired"
harness_wait_value 30 -gt "$relay_before" logged "$H_DIR/relay-four.log"
harness_wait_value 30 -gt "$daemon_before" logged "$H_DIR/workers.log"
log_steady "$H_DIR/relay-four.log" "$expired"
log_steady "$H_DIR/workers.log" "$expired"
expect_eq "the relay's log: this outage once" $((relay_before + 1)) "$(logged "$H_DIR/relay-four.log")"
sent_once_absent "messages of chats $bad_chats (on master :$bad) stored while its certificate is expired" "$first" "$bad_chats"
[ "$(relay_status unsent)" -gt 0 ] || fail "no row waits for master :$bad"
echo "ok   an expired certificate on master :$bad only (seed :$SEED): chats $bad_chats wait, $(relay_status unsent) row(s) in all; relay status: $(relay_status last_error)"
cluster_node_certs node
harness_wait_for 30 relay_unsent_is 0
sent_once_verify "one master's certificate replaced"

# 4d. a plaintext node behind rediss-cluster:// (both processes restarted on it): it never answers the
# handshake (it reads the ClientHello as an unfinished command), so each log names the likely cause, once
tls_plain_redis
PLAIN="rediss-cluster://127.0.0.1:$PLAIN_PORT?cacert=$TLS_DIR/ca.crt"
harness_stop_pid "$RELAY_PID"
harness_stop_pid "$DAEMON_PID"
REDIS_URL=$PLAIN relay_start plain --redis-timeout 1000
CHAT_OUTBOXD_REDIS_URL=$PLAIN daemon_start workers-plain.log --service workers --queue chat-messages
sent_once_send 5
hint="speak TLS on this port"
harness_wait_for 30 error_has "$hint"
harness_wait_for 10 relay_unsent_is 5
harness_wait_for 30 grep -q "$hint" "$H_DIR/workers-plain.log"
# the consumer's and the gateway's cluster connections too, not only the bus's subscriber
harness_wait_for 30 grep -q "cluster seed unreachable: .*$hint" "$H_DIR/workers-plain.log"
harness_wait_for 10 healthz_redis false
log_steady "$H_DIR/relay-plain.log" "$hint"
log_steady "$H_DIR/workers-plain.log" "$hint"
echo "ok   a plaintext node behind rediss-cluster://: rows wait, relay status: $(relay_status last_error)"
echo "ok   a plaintext node, the daemon: $(grep -m1 "$hint" "$H_DIR/workers-plain.log" | cut -c1-220)"
kill "$(cat "$H_DIR/plain.pid")"
harness_stop_pid "$RELAY_PID"
harness_stop_pid "$DAEMON_PID"

# 5. a master SIGKILLed mid-stream and a reshard under traffic, over TLS: the relay waits for one replica on
# every master a pass wrote to (what the dead master alone held goes again); three daemons of daemon.mjs
# on chats of their own (CLUSTER_CHAT_BASE: not those of the checks above)
relay_start r1 --redis-min-replicas 1 --redis-timeout 1000
daemon_start workers.log --service workers --queue chat-messages
harness_wait_for 30 relay_unsent_is 0
sent_once_verify "both restarted on the TLS seed"
harness_stop_pid "$DAEMON_PID"
DAEMON_PORTS="$(harness_free_port) $(harness_free_port) $(harness_free_port)"
export H_DIR DAEMON_PORTS CLUSTER_CHAT_BASE=1000 CHAT_OUTBOXD_REDIS_URL=$GOOD
(cd "$H_ROOT/tests" && node cluster/daemon.mjs 2>>"$H_DIR/daemon.log")
cluster_daemons_followed "$H_DIR/daemon.log"
