# tests/cluster/tests.cmake - Redis Cluster as the broker (issue 36): 3 masters, 3 replicas, started by
# tests/harness/redis_cluster.sh.
# chat-outbox-relay through redis-cluster:// with real bullmq Workers on ioredis Cluster connections:
# a master SIGKILLed mid-stream and a reshard under traffic, nothing lost, twice or out of order.
add_shell_test(cluster.relay cluster/relay.sh 90)
set_tests_properties(cluster.relay PROPERTIES COST 60)
