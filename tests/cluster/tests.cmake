# tests/cluster/tests.cmake - Redis Cluster as the broker (issue 36): 3 masters, 3 replicas, started by
# tests/harness/redis_cluster.sh. cluster.relay runs in the README's test command; cluster.mixed_pool, the extension's and the
# daemon's suites and the TLS ones (one to two minutes each) in the long one, to keep the README's command within its budget.
# chat-outbox-relay (cluster.relay) and the extension's relay (cluster.extension) through redis-cluster://
# with real bullmq Workers on ioredis Cluster connections: a master SIGKILLed mid-stream and a reshard
# under traffic, nothing lost, twice or out of order.
add_shell_test(cluster.relay cluster/relay.sh 90)
set_tests_properties(cluster.relay PROPERTIES COST 60)
# The extension's relay (the background worker) on the same cluster and scenario, with its own counts.
add_shell_test(cluster.extension cluster/extension.sh 90)
set_tests_properties(cluster.extension PROPERTIES COST 60 LABELS long)
# chat-outboxd through redis-cluster://: the relay and three daemons (two of one service, sharing its
# partitions and its bus), both directions under traffic, a master SIGKILLed mid-stream; nothing lost,
# stored or shown twice, or out of order; the slot spread and the gap printed.
add_shell_test(cluster.daemon cluster/daemon.sh 150)
set_tests_properties(cluster.daemon PROPERTIES COST 60 LABELS long)
# rediss-cluster:// (about 2 minutes, so in the long command): chat-outbox-relay and chat-outboxd on a cluster whose
# nodes speak only TLS (one seed in the URL, the other masters reached where CLUSTER SLOTS says), every message
# once and in order; a wrong CA for each process and a wrong sni=: one clear error, rows wait, everything
# flows once after a restart with the right URL; an expired and a wrong-name certificate on every node and a
# plaintext node behind the URL: the relay's status, each log once, the daemon's /healthz, rows wait, all
# flows once fixed; then cluster/daemon.mjs over TLS (a master SIGKILLed, a reshard, under traffic).
add_shell_test(cluster.tls cluster/tls.sh 180)
set_tests_properties(cluster.tls PROPERTIES COST 120 LABELS long)
# The extension's relay on the same TLS-only cluster (rediss-cluster:// in chat_outbox.redis_url), chat-outboxd
# consuming: once and in order; a wrong CA by a reload, an expired and a wrong-name certificate on every node, a
# plaintext node behind the URL: rows wait, one clear error, fixed it flows; then real bullmq Workers on
# ioredis Cluster connections over TLS through a master's SIGKILL and a reshard (cluster/relay.mjs).
add_shell_test(cluster.tls_extension cluster/tls_extension.sh 120)
set_tests_properties(cluster.tls_extension PROPERTIES COST 60 LABELS long)
# A real bullmq Worker on an ioredis Cluster connection and chat-outboxd share one queue "{t-mixed}" on the
# cluster (consumer.mixed_pool's check there): each job processed by exactly one of them, both take some.
add_shell_test(cluster.mixed_pool consumer/mixed_pool.sh 40 ARGS cluster)
set_tests_properties(cluster.mixed_pool PROPERTIES LABELS long)
