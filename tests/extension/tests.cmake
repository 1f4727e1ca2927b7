# tests/extension/tests.cmake - the chat_outbox extension's suites (need `make install` first).
add_shell_test(extension.regress regress/run.sh 240)
