# tests/extension/tests.cmake - the chat_outbox extension's suites (need `make install` first).
# No server: the installed chat_outbox files are exactly this build's (a file an earlier build left there
# fails it, as a missing one does), so the suites below test what this tree installs.
add_shell_test(extension.installed_files extension/installed_files.sh 10)
add_shell_test(extension.regress regress/run.sh 240)
add_shell_test(extension.relay_e2e extension/relay_e2e.sh 180)
add_shell_test(extension.faults extension/faults.sh 240)
add_shell_test(extension.script_flush extension/script_flush.sh 180)
add_shell_test(extension.redis_auth extension/redis_auth.sh 120)
# rediss:// against a redis-server with only a TLS port, a real bullmq Worker over TLS, each bad certificate.
add_shell_test(extension.redis_tls extension/redis_tls.sh 180)
add_shell_test(extension.status extension/status.sh 120)
add_shell_test(extension.retention extension/retention.sh 120)
add_shell_test(extension.rotation_faults extension/rotation_faults.sh 120)
# A seeded random schedule of senders (every isolation level, savepoints, prepared transactions) across
# generation switches, two relays, a relay SIGKILL, a partition change and a shard outage (issue 33).
add_shell_test(extension.schedules extension/schedules.sh 90)
# A database moved with its outbox (pg_dump/pg_restore into another cluster, --clean into itself, another
# database of the cluster, a logical replica's cutover): the backlog once, in order, nothing sent again.
add_shell_test(extension.moves extension/moves.sh 90)
add_shell_test(extension.missing_database extension/missing_database.sh 120)
add_shell_test(extension.hostile_ids extension/hostile_ids.sh 180)
add_shell_test(extension.service_isolation extension/service_isolation.sh 120)
add_shell_test(extension.inbox_retention extension/inbox_retention.sh 120)
add_shell_test(extension.batch_add_script extension/batch_add_script.sh 60)
add_shell_test(extension.partitions extension/partitions.sh 120)
add_shell_test(extension.layout_guard extension/layout_guard.sh 60)
add_shell_test(extension.late_commit_pass extension/late_commit_pass.sh 60)
# Redis back with an older copy of its data than it acknowledged (a backup restored): the jobs it lost are
# relayed again, nothing lost or reordered (issue 36); managed.relay.redis_rollback runs it with chat-outbox-relay.
add_shell_test(extension.redis_rollback extension/redis_rollback.sh 40)
add_shell_test(extension.update extension/update.sh 30)
add_shell_test(extension.update_in_place extension/update_in_place.sh 60)
add_shell_test(extension.update_waiting extension/update_waiting.sh 20)
# No server: the C++/Postgres boundary rule, read from extension/src/pg's text (docs/extension.md).
add_test(NAME extension.cpp_boundary COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/extension/cpp_boundary_lint.py ${CMAKE_SOURCE_DIR})
add_shell_test(extension.isolation_default extension/isolation_default.sh 60)
# The extension on the other majors Debian ships (17 in trixie, 18 in sid), in a root of that release
# (scripts/container.sh): built warning-free, pg_regress and the isolation specs, the relay end to end.
# Long suites (the first
# run makes each root from the archive).
foreach(major 17 18)
  add_shell_test(extension.pg${major} extension/on_major.sh 600 ARGS ${major})
endforeach()
