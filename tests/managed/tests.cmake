# tests/managed/tests.cmake - chat_outbox without our library: the plain-SQL install and the external relay.
add_shell_test(managed.install managed/install.sh 60)
add_shell_test(managed.relay managed/relay.sh 180)
# Suites written for the extension that need nothing of it but its API, run against the managed install.
add_shell_test(managed.extension.relay_e2e managed/in_managed_mode.sh 180 ARGS extension/relay_e2e.sh)
add_shell_test(managed.daemon.relay_to_inbox managed/in_managed_mode.sh 180 ARGS daemon/relay_to_inbox.sh)
add_shell_test(managed.switch_modes managed/switch_modes.sh 180)
add_shell_test(managed.faults.writeup_scenario managed/in_managed_mode.sh 300 ARGS faults/writeup_scenario.sh)
add_shell_test(managed.daemon.crash_never_fails managed/in_managed_mode.sh 180 ARGS daemon/crash_never_fails.sh)
add_shell_test(managed.daemon.duplicates managed/in_managed_mode.sh 120 ARGS daemon/duplicates.sh)
add_shell_test(managed.daemon.stalled_recovery managed/in_managed_mode.sh 180 ARGS daemon/stalled_recovery.sh)
add_shell_test(managed.gateway.catchup managed/in_managed_mode.sh 180 ARGS gateway/catchup.sh)
add_shell_test(managed.config_doc managed/config_doc.sh 30)
add_shell_test(managed.retention managed/retention.sh 90)
