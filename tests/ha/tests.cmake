# tests/ha/tests.cmake - high availability: Redis under Sentinel (issue 14).
add_shell_test(ha.redis_failover ha/redis_failover.sh 120)
