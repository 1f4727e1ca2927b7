# tests/daemon/tests.cmake - chat-outboxd consumer integration suites (real Postgres, Redis, bullmq).
add_shell_test(daemon.bullmq_producer daemon/bullmq_producer.sh 120)
add_shell_test(daemon.relay_to_inbox daemon/relay_to_inbox.sh 120)
add_shell_test(daemon.duplicates daemon/duplicates.sh 120)
add_shell_test(daemon.restart_recovery daemon/restart_recovery.sh 120)
add_shell_test(daemon.stalled_recovery daemon/stalled_recovery.sh 120)
add_shell_test(daemon.poison_job daemon/poison_job.sh 120)
add_shell_test(daemon.mixed_pool daemon/mixed_pool.sh 120)
