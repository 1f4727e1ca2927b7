# tests/valkey/tests.cmake - the delivery suites again on Valkey 8 (valkey-server from bookworm-backports,
# scripts/setup.sh installs it) instead of Redis 7.0: the same scripts, the harness's server binary their
# one parameter (tests/valkey/on_valkey.sh). A few suites that prove delivery end to end, each short:
# the extension's relay with a real bullmq Worker, the write-up's Redis outage under clients both ways,
# and the scaled topology's faults (a Redis shard SIGKILLed under clients, consumers and gateways).
add_shell_test(valkey.extension.relay_e2e valkey/on_valkey.sh 60 ARGS extension/relay_e2e.sh)
add_shell_test(valkey.faults.writeup_scenario valkey/on_valkey.sh 300 ARGS faults/writeup_scenario.sh)
add_shell_test(valkey.faults.scaled valkey/on_valkey.sh 120 ARGS faults/soak.sh --topology scaled --scripted --chats 12)
# The cluster suite on Valkey's cluster mode: it passes, but Valkey 8 moves a slot about 20 times slower than
# Redis 7.0 (SETSLOT waits for the replicas: 431 slots in 61 s against 2-7 s), so it is a long suite.
add_shell_test(valkey.cluster.relay valkey/on_valkey.sh 150 ARGS cluster/relay.sh)
set_tests_properties(valkey.cluster.relay PROPERTIES LABELS long)
# The extension's relay on Valkey's cluster mode (tests/cluster/extension.sh), long for the same reason.
add_shell_test(valkey.cluster.extension valkey/on_valkey.sh 150 ARGS cluster/extension.sh)
set_tests_properties(valkey.cluster.extension PROPERTIES LABELS long)
# A Sentinel failover under clients both ways on Valkey's sentinels and nodes (tests/ha/sentinel_switch.sh):
# long, as the Redis one is.
add_shell_test(valkey.ha.sentinel_switch valkey/on_valkey.sh 180 ARGS ha/sentinel_switch.sh)
set_tests_properties(valkey.ha.sentinel_switch PROPERTIES LABELS long)
