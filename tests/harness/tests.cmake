# tests/harness/tests.cmake - the test harness itself.
add_shell_test(harness.deep_path harness/deep_path.sh 60)
add_shell_test(harness.no_leaks harness/no_leaks.sh 30)
