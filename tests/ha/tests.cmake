# tests/ha/tests.cmake - high availability: Redis under Sentinel (issue 14).
add_shell_test(ha.redis_failover ha/redis_failover.sh 120)
add_shell_test(ha.pg_failover ha/pg_failover.sh 120)
add_shell_test(ha.sentinel_shard ha/sentinel_shard.sh 60)
# SENTINEL FAILOVER twice under traffic, both directions and client kinds: chat-outboxd leaves a master that stays up when the
# sentinels announce the new one; one Sentinel watch per daemon, which moves when its sentinel dies and asks where the master is.
add_shell_test(ha.sentinel_switch ha/sentinel_switch.sh 120)
set_tests_properties(ha.sentinel_switch PROPERTIES LABELS long)
# rediss-sentinel://: sentinels and nodes that serve TLS only, a master SIGKILLed under the relay and chat-outboxd.
add_shell_test(ha.sentinel_tls ha/sentinel_tls.sh 120)
# SENTINEL FAILOVER of a master that stays alive, made deterministic (a replica Sentinel cannot move keeps meeting the
# relay's WAIT 1 on the old master until Sentinel demotes it): the relay must not lose what it committed there
# (docs/ha.md, "A failover of a master that is still alive"); the extension's relay and chat-outbox-relay.
add_shell_test(ha.sentinel_live_master ha/sentinel_live_master.sh 90)
add_shell_test(managed.ha.sentinel_live_master managed/in_managed_mode.sh 90 ARGS ha/sentinel_live_master.sh)
set_tests_properties(ha.sentinel_live_master managed.ha.sentinel_live_master PROPERTIES LABELS long)
