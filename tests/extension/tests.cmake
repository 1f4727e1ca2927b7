# tests/extension/tests.cmake - the chat_outbox extension's suites (need `make install` first).
add_shell_test(extension.regress regress/run.sh 240)
add_shell_test(extension.relay_e2e extension/relay_e2e.sh 180)
add_shell_test(extension.faults extension/faults.sh 240)
add_shell_test(extension.script_flush extension/script_flush.sh 180)
add_shell_test(extension.redis_auth extension/redis_auth.sh 120)
add_shell_test(extension.status extension/status.sh 120)
add_shell_test(extension.retention extension/retention.sh 120)
add_shell_test(extension.missing_database extension/missing_database.sh 120)
