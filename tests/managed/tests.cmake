# tests/managed/tests.cmake - chat_outbox without our library: the plain-SQL install and the external relay.
add_shell_test(managed.install managed/install.sh 60)
add_shell_test(managed.relay managed/relay.sh 180)
add_shell_test(managed.relay.logical managed/relay.sh 180 ARGS --logical)
add_shell_test(managed.wake_logical managed/wake_logical.sh 120)
add_shell_test(managed.poll_alone managed/poll_alone.sh 60)
# chat-outbox-relay and chat-outboxd over rediss:// (a TLS-only redis-server) and sslmode=verify-full.
add_shell_test(managed.tls managed/tls.sh 180)
# Suites written for the extension that need nothing of it but its API, run against the managed install:
# those where the relay matters. The daemon-only ones (crash_never_fails, duplicates, stalled_recovery,
# catchup) see the same jobs whichever relay queued them and run once, with the extension.
add_shell_test(managed.extension.relay_e2e managed/in_managed_mode.sh 180 ARGS extension/relay_e2e.sh)
add_shell_test(managed.consumer.relay_to_inbox managed/in_managed_mode.sh 180 ARGS consumer/relay_to_inbox.sh)
add_shell_test(managed.switch_modes managed/switch_modes.sh 180)
add_shell_test(managed.switch_in_place managed/switch_in_place.sh 120)
add_shell_test(managed.faults.writeup_scenario managed/in_managed_mode.sh 300 ARGS faults/writeup_scenario.sh)
add_shell_test(managed.extension.hostile_ids managed/in_managed_mode.sh 180 ARGS extension/hostile_ids.sh)
add_shell_test(managed.config_doc managed/config_doc.sh 30)
add_shell_test(managed.update managed/in_managed_mode.sh 30 ARGS extension/update.sh)
add_shell_test(managed.update_in_place managed/in_managed_mode.sh 60 ARGS extension/update_in_place.sh)
add_shell_test(managed.update_waiting managed/in_managed_mode.sh 20 ARGS extension/update_waiting.sh)
add_shell_test(managed.retention managed/retention.sh 90)
add_shell_test(managed.rotation_faults managed/rotation_faults.sh 90)
# tests/extension/schedules.sh in managed mode: two chat-outbox-relay processes, both rotating.
add_shell_test(managed.schedules managed/in_managed_mode.sh 90 ARGS extension/schedules.sh)
# extension.moves' twin: the managed install dumped and restored by its owner, chat-outbox-relay rebasing.
add_shell_test(managed.moves managed/moves.sh 90)
add_shell_test(managed.extension.partitions managed/in_managed_mode.sh 120 ARGS extension/partitions.sh)
add_shell_test(managed.extension.layout_guard managed/in_managed_mode.sh 60 ARGS extension/layout_guard.sh)
add_shell_test(managed.ha.redis_failover managed/in_managed_mode.sh 120 ARGS ha/redis_failover.sh)
add_shell_test(managed.extension.late_commit_pass managed/in_managed_mode.sh 60 ARGS extension/late_commit_pass.sh)
# tests/extension/redis_rollback.sh with chat-outbox-relay: Redis restored from an older copy, the lost jobs sent again.
add_shell_test(managed.relay.redis_rollback managed/in_managed_mode.sh 40 ARGS extension/redis_rollback.sh)
# The managed mode on PostgreSQL 16, 17 and 18 (the servers tests/package.json pins): the cheapest set that
# covers the install by a non-superuser, the relay (woken by logical decoding, which is where the majors
# differ most; SIGKILLed mid-batch; a real bullmq Worker) and the write-up's scenario (socket.io-client,
# Postgres restarted under the relay).
foreach(major 16 17 18)
  add_shell_test(managed.pg${major}.install managed/on_version.sh 60 ARGS ${major} managed/install.sh)
  add_shell_test(managed.pg${major}.relay.logical managed/on_version.sh 180 ARGS ${major} managed/relay.sh --logical)
  add_shell_test(managed.pg${major}.faults.writeup_scenario managed/on_version.sh 300
    ARGS ${major} managed/in_managed_mode.sh faults/writeup_scenario.sh)
endforeach()
