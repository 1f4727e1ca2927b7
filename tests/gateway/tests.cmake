# tests/gateway/tests.cmake - the client gateway: Socket.IO, plain /ws, catch-up, faults, HTTP.

# gateway_peer_test(<name> <peer.mjs> <timeout> [chat-outboxd flags...]): one Node peer against one
# daemon started by run_peer.sh; the peer's header says what it checks.
function(gateway_peer_test name peer timeout)
  add_shell_test(${name} gateway/run_peer.sh ${timeout} ARGS ${peer} ${ARGN})
endfunction()

# socket.io-client 4.8.1: transports, heartbeats, rooms, join/leave/send with acks, auth refusals
# pings every 300 ms so heartbeats show within the test; a pong may take 5 s (a busy machine)
gateway_peer_test(gateway.socketio socketio.mjs 120 --ping-interval 300 --ping-timeout 5000)
# catch-up after a disconnect and after a daemon restart
add_shell_test(gateway.catchup gateway/catchup.sh 120)
# bad frames close only their connection; Engine.IO HTTP errors
gateway_peer_test(gateway.faults faults.mjs 120 --max-payload 100000)
# the plain JSON WebSocket endpoint /ws
gateway_peer_test(gateway.plain_ws plain_ws.mjs 120)
# /healthz, /metrics, CORS, 404, SIGTERM with clients connected
add_shell_test(gateway.http gateway/http.sh 120)
# request heads libwebsockets would drop unanswered get 400 / 431 / 408 from the gateway; clients
# connected meanwhile are shown every message (the 408 waits for the 20 s head deadline)
gateway_peer_test(gateway.request_heads request_heads.mjs 40)
add_shell_test(gateway.fuzz gateway/fuzz.sh 600)
# token expiry ends connections; a session that never joins is closed
# the connect timeout is checked at each ping, so pings every 300 ms (a pong may take 5 s)
gateway_peer_test(gateway.expiry expiry.mjs 120 --connect-timeout 1000 --presence-ttl 3000 --ping-interval 300 --ping-timeout 5000)
# a stalled upgrade probe is dropped while its polling session goes on; a silent /ws peer is closed
gateway_peer_test(gateway.timeouts timeouts.mjs 120 --upgrade-timeout 500 --ping-interval 1500 --ping-timeout 1500)
# clients that never read, unauthenticated handshakes, a flooding sender, a full query queue: bounded
# memory, and the clients that behave get everything
add_shell_test(gateway.memory_bounds gateway/memory_bounds.sh 180)
# several daemons of one service: every client on every instance is shown everything once, in order
add_shell_test(gateway.bus_spread gateway/bus.sh 120 ARGS spread)
# a gateway whose bus subscription is killed fills from the inbox; a row nobody published still arrives
add_shell_test(gateway.bus_interrupt gateway/bus.sh 120 ARGS interrupt)
# long-polling clients behind a real HAProxy with the documented configuration (docs/haproxy.cfg)
add_shell_test(gateway.bus_haproxy gateway/haproxy.sh 120)
# a big chat: join and leave storms cost each socket one presence frame per interval, paged presence, typing coalesced
gateway_peer_test(gateway.big_room big_room.mjs 120 --presence-threshold 20 --presence-interval 500)
# a storm of 60 members of one chat resuming at once, some while the first reads wait on a locked inbox: each
# shown exactly its messages and its own chat_state, and the cluster's statement log shows the reads shared per chat
add_shell_test(gateway.join_storm gateway/join_storm.sh 60)
# the conversation events between the two services' daemons: history, read receipts, presence,
# typing, shown/sent, bad input and floods (Socket.IO and /ws)
add_shell_test(gateway.conversation gateway/two_sides.sh 120 ARGS conversation.mjs)
# edits and deletes: live, catch-up and history on both sides, a bullmq Worker, bad input and races
add_shell_test(gateway.edits gateway/two_sides.sh 30 ARGS edits.mjs)
# --authz membership: live revocation on two gateways, add then join, a removal racing a send, hostile subs
add_shell_test(gateway.members gateway/two_sides.sh 30 ARGS members.mjs)
# --authz membership over --max-member-chats: the first chats, chats_cut, joins one by one, live changes past the list
add_shell_test(gateway.members_bound gateway/two_sides.sh 30 ARGS members_bound.mjs)
# client message ids: acks, repeats, conflicts, refusals before the database, a hostile reuse, the
# idempotent edit and delete, on Socket.IO and /ws
add_shell_test(gateway.client_msg_id gateway/two_sides.sh 30 ARGS client_msg_id.mjs)
# sends cut at every point (before the gateway, after, after the commit, before the ack; dropped or
# stalled) and sent again with their client_msg_id: stored once, shown once, acked with the stored one.
# 2 rounds of the 16 cuts here; 25 rounds (400 cuts) in the long set
add_shell_test(gateway.cut_sends gateway/two_sides.sh 60 ARGS cut_sends.mjs 2)
add_shell_test(gateway.cut_sends_long gateway/two_sides.sh 400 ARGS cut_sends.mjs 25)
# the JavaScript client library (clients/js/): written while the daemon is down, sends cut before
# their ack, the daemon killed mid-queue, refusals, edits and deletes, resume after 450 missed
add_shell_test(gateway.client_lib gateway/two_sides.sh 60 ARGS client_lib.mjs)
