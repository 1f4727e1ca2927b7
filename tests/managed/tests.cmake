# tests/managed/tests.cmake - chat_outbox without our library: the plain-SQL install and the external relay.
add_shell_test(managed.install managed/install.sh 60)
add_shell_test(managed.relay managed/relay.sh 180)
