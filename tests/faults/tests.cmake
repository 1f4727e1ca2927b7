# tests/faults/tests.cmake - the write-up's failure scenario and the chaos soak (issue 4), the scaled topology (issue 13).
add_shell_test(faults.writeup_scenario faults/writeup_scenario.sh 300)
add_shell_test(faults.soak faults/soak.sh 400)
add_shell_test(faults.no_aof faults/no_aof.sh 180)
# issue 13: one service, four partitions on two Redis shards, two consumers (+ one joining), three
# gateways; each of the scaled topology's faults once (soak.sh --topology scaled --scripted).
add_shell_test(faults.scaled faults/soak.sh 120 ARGS --topology scaled --scripted --chats 12)
# issue 23: the pure parts of the soaks' shared library (the HA soak's gap), with node's test runner
add_test(NAME faults.soak_lib COMMAND node --test ${CMAKE_CURRENT_SOURCE_DIR}/faults/soak_lib_test.mjs)
set_tests_properties(faults.soak_lib PROPERTIES TIMEOUT 60)
