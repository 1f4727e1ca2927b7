# tests/gateway/tests.cmake - the client gateway: Socket.IO, plain /ws, catch-up, faults, HTTP.
add_shell_test(gateway.socketio gateway/socketio.sh 120)
add_shell_test(gateway.catchup gateway/catchup.sh 120)
add_shell_test(gateway.faults gateway/faults.sh 120)
add_shell_test(gateway.plain_ws gateway/plain_ws.sh 120)
add_shell_test(gateway.http gateway/http.sh 120)
add_shell_test(gateway.fuzz gateway/fuzz.sh 600)
add_shell_test(gateway.expiry gateway/expiry.sh 120)
add_shell_test(gateway.timeouts gateway/timeouts.sh 120)
