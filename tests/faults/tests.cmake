# tests/faults/tests.cmake - the write-up's failure scenario and the chaos soak (issue 4).
add_shell_test(faults.writeup_scenario faults/writeup_scenario.sh 300)
add_shell_test(faults.soak faults/soak.sh 400)
add_shell_test(faults.no_aof faults/no_aof.sh 180)
