# tests/ha/tests.cmake - high availability: Redis under Sentinel (issue 14).
add_shell_test(ha.redis_failover ha/redis_failover.sh 120)
add_shell_test(ha.pg_failover ha/pg_failover.sh 120)
add_shell_test(ha.sentinel_shard ha/sentinel_shard.sh 60)
# rediss-sentinel://: sentinels and nodes that serve TLS only, a master SIGKILLed under the relay and chat-outboxd.
add_shell_test(ha.sentinel_tls ha/sentinel_tls.sh 120)
