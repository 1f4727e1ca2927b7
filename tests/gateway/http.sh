#!/usr/bin/env bash
# tests/gateway/http.sh - /healthz (200 / 503 with Redis down), /metrics, Redis's appendfsync in both
# (everysec, then always after Redis restarts with it), 404, 431 for oversized headers, 413 for a polling
# POST declaring more than --max-payload, CORS for the origins in
# --cors-origins only (never on /metrics or /healthz), the Redis and Postgres reconnect counters moving with
# those restarts, /metrics on its own listener (--metrics-listen; one, or a --listen,
# in use or not on this machine stops the daemon at start, exit 2, naming it), a listener out of
# descriptors (said once, retried, serving again), and SIGTERM: every client's transport is closed ("transport close", so it would reconnect) and the
# daemon exits.
. "$(dirname "$0")/gateway.sh"
gateway_start gateway-http --cors-origins http://app.example,https://other.example
cd "$(dirname "$0")"
url=$DAEMON_URL
healthz_has() { curl -s "$url/healthz" | grep "$1" >/dev/null; }
healthz_code() { curl -s -o /dev/null -w '%{http_code}' "$url/healthz"; }

harness_wait_for 20 bash -c "curl -s $url/healthz | grep -q '\"redis\":true,\"postgres\":true.*\"redis_appendfsync\":\".*\"lease\":\"held\"'"
body=$(curl -s -w ' %{http_code}' "$url/healthz")
[[ $body == '{"status":"ok","redis":true,"postgres":true,"clients":0,"redis_appendfsync":"everysec","partitions":[{"partition":0,"queue":"chat-messages","lease":"held"}]} 200' ]] ||
	fail "healthz: $body"
echo "ok   /healthz 200: $body"

ctype=$(curl -s -o "$H_DIR/metrics.txt" -w '%{content_type} %{http_code}' "$url/metrics")
[[ $ctype == 'text/plain; version=0.0.4 200' ]] || fail "metrics content type: $ctype"
grep -q '^chat_outboxd_frames_rejected_total ' "$H_DIR/metrics.txt" || fail "no frames_rejected in /metrics"
grep -q '^chat_outboxd_gateway_frames_pushed_total ' "$H_DIR/metrics.txt" || fail "no gateway counters in /metrics"
grep -qx 'chat_outboxd_redis_appendfsync{setting="everysec"} 1' "$H_DIR/metrics.txt" || fail "appendfsync in /metrics: $(grep appendfsync "$H_DIR/metrics.txt")"
echo "ok   /metrics"

# One pub/sub connection per daemon: the bus and the chats' events share it (docs/gateway.md, "Across gateways and services: Redis").
pubsub_conns() { rcli CLIENT LIST | grep 'name=chat-outboxd:' | grep -E ' flags=[A-Za-z]*P'; }
harness_wait_for 10 bash -c "redis-cli -p $REDIS_PORT CLIENT LIST | grep -q 'name=chat-outboxd:.*:pubsub .* sub=1 '"
[ "$(pubsub_conns | wc -l)" = 1 ] || fail "the daemon's pub/sub connections: $(pubsub_conns)"
pubsub_conns | grep -q 'name=chat-outboxd:bull:chat-messages:[^ ]*:pubsub ' || fail "not named :pubsub: $(pubsub_conns)"
echo "ok   one pub/sub connection (the bus channel subscribed on it)"

# metric <name>: that series' value in /metrics (one sample, no labels)
metric() { curl -s "$url/metrics" | sed -n "s/^$1 //p"; }
expect_eq "redis reconnects before any outage" 0 "$(metric chat_outboxd_redis_reconnects_total)"
expect_eq "postgres reconnects before any outage" 0 "$(metric chat_outboxd_postgres_reconnects_total)"

# Redis restarted with another appendfsync: both endpoints say so once the daemon reconnected.
harness_redis_stop
REDIS_EXTRA_ARGS="--appendfsync always" harness_redis_start_again
harness_wait_for 30 bash -c "curl -s $url/healthz | grep -q '\"redis\":true,.*\"redis_appendfsync\":\"always\"'" ||
	fail "healthz after a restart with appendfsync always: $(curl -s $url/healthz)"
curl -s "$url/metrics" | grep -x 'chat_outboxd_redis_appendfsync{setting="always"} 1' >/dev/null || fail "appendfsync always in /metrics"
[ "$(curl -s "$url/metrics" | grep -c '^chat_outboxd_redis_appendfsync{')" = 1 ] || fail "more than one appendfsync sample"
echo "ok   appendfsync always shows in /healthz and /metrics after Redis restarts with it"
# every Redis connection of the daemon (commands, pub/sub, the partition's consumer) lost and back
harness_wait_value 10 -ge 1 metric chat_outboxd_redis_reconnects_total
echo "ok   chat_outboxd_redis_reconnects_total $(metric chat_outboxd_redis_reconnects_total) after the Redis restart"

code=$(curl -s -o /dev/null -w '%{http_code}' "$url/nope")
[ "$code" = 404 ] || fail "unknown path: $code"
echo "ok   unknown path 404"

# Request headers: up to the documented 8192 bytes they are read; past that the answer is 431 and the
# connection closes, for a plain GET and a WebSocket upgrade alike (docs/client-protocol.md, "HTTP limits").
long=$(head -c 9000 /dev/zero | tr '\0' a)
ws_upgrade=(-H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==')
for req in "/healthz?token=$long" "/socket.io/?EIO=4&transport=polling&token=$long" "/ws?token=$long" "/nope?token=$long"; do
	for how in plain upgrade bearer; do
		args=(-s -o "$H_DIR/body" -D "$H_DIR/head" -w '%{http_code}' --max-time 5)
		case $how in upgrade) args+=("${ws_upgrade[@]}") ;; bearer) args+=(-H "Authorization: Bearer $long") req=${req%%\?*} ;; esac
		code=$(curl "${args[@]}" "$url$req" || true)
		[ "$code" = 431 ] || fail "${req:0:40}... ($how) with 9000 bytes of headers: status $code"
		grep -qi '^connection: close' <(tr -d '\r' <"$H_DIR/head") || fail "431 without Connection: close: $(cat "$H_DIR/head")"
	done
done
echo "ok   9000-byte ?token= or Authorization -> 431 and close (GET, polling, /ws, upgrade)"
ok=$(head -c 7000 /dev/zero | tr '\0' a)
for args in "-H Authorization:Bearer$ok $url/healthz" "-H X-Long:$ok $url/healthz" "$url/healthz?token=$ok"; do
	code=$(curl -s -o /dev/null -w '%{http_code}' $args || true)
	[ "$code" = 200 ] || fail "7000 bytes in ${args:0:20}...: status $code"
done
echo "ok   a 7000-byte Authorization, X- header or ?token= is read"
# A head over 16,384 bytes is answered 431 by the gateway before libwebsockets reads it (the shapes
# and the other answers: gateway.request_heads).
code=$(curl -s -o /dev/null -D "$H_DIR/head" -w '%{http_code}' -H "Authorization: Bearer $long" "$url/healthz?token=$long" || true)
[ "$code" = 431 ] || fail "two 9000-byte values: status $code"
grep -qi '^connection: close' <(tr -d '\r' <"$H_DIR/head") || fail "431 without Connection: close: $(cat "$H_DIR/head")"
echo "ok   a head over 16,384 bytes -> 431 and close"

# A polling POST that declares more than --max-payload is refused on its Content-Length: 413 at
# once, before any of the body is sent, then the connection closes and the session is gone.
sid=$(curl -s "$url/socket.io/?EIO=4&transport=polling" | sed -n 's/.*"sid":"\([^"]*\)".*/\1/p')
[ -n "$sid" ] || fail "no polling handshake"
exec 3<>"/dev/tcp/127.0.0.1/${url##*:}"
printf 'POST /socket.io/?EIO=4&transport=polling&sid=%s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain;charset=UTF-8\r\nContent-Length: 104857600\r\n\r\n' "$sid" >&3
# cat ends when the daemon closes the connection (timeout's 124: it did not)
resp=$(timeout 5 cat <&3 | tr -d '\r'; printf '\ncat=%s\n' "${PIPESTATUS[0]}")
exec 3<&-
[ "$(head -1 <<<"$resp")" = 'HTTP/1.1 413 Request Entity Too Large' ] || fail "declared 100 MB polling POST: '$resp'"
grep -qi '^connection: close$' <<<"$resp" || fail "413 without Connection: close: $resp"
grep -qx 'cat=0' <<<"$resp" || fail "the connection stayed open after the 413: $resp"
code=$(curl -s -o "$H_DIR/body" -w '%{http_code}' "$url/socket.io/?EIO=4&transport=polling&sid=$sid")
[ "$code" = 400 ] || fail "the session after a 413: status $code $(cat "$H_DIR/body")"
echo "ok   polling POST declaring 100 MB -> 413 before its body, connection and session closed"

# CORS: a browser's preflight learns the methods and the headers it asked for; an origin in
# --cors-origins is echoed (with credentials) on preflights and on polling responses alike.
pre=$(curl -s -o /dev/null -D - -X OPTIONS -H 'Origin: http://app.example' -H 'Access-Control-Request-Method: POST' \
	-H 'Access-Control-Request-Headers: content-type, x-app-token' "$url/socket.io/?EIO=4&transport=polling" | tr -d '\r')
grep -q '^HTTP/1.1 204' <<<"$pre" || fail "preflight status: $pre"
grep -qi '^access-control-allow-origin: http://app.example$' <<<"$pre" || fail "preflight origin: $pre"
grep -qi '^access-control-allow-credentials: true$' <<<"$pre" || fail "preflight credentials: $pre"
grep -qi '^access-control-allow-methods: GET, POST, OPTIONS$' <<<"$pre" || fail "preflight methods: $pre"
grep -qi '^access-control-allow-headers: content-type, x-app-token$' <<<"$pre" || fail "preflight headers: $pre"
echo "ok   CORS preflight: methods and requested headers allowed"
bad=$(curl -s -o /dev/null -D - -X OPTIONS -H 'Origin: http://app.example' -H 'Access-Control-Request-Headers: x(a)' \
	"$url/socket.io/?EIO=4&transport=polling" | tr -d '\r')
grep -qi '^access-control-allow-headers' <<<"$bad" && fail "a malformed header list was echoed: $bad"
echo "ok   CORS preflight: a malformed header list is not echoed"
hs=$(curl -s -o /dev/null -D - -H 'Origin: http://app.example' "$url/socket.io/?EIO=4&transport=polling" | tr -d '\r')
grep -qi '^access-control-allow-origin: http://app.example$' <<<"$hs" || fail "polling origin: $hs"
grep -qi '^access-control-allow-methods' <<<"$hs" && fail "allow-methods on a non-preflight response: $hs"
echo "ok   CORS on polling responses"
for req in "-X OPTIONS -H Access-Control-Request-Method:POST $url/socket.io/?EIO=4&transport=polling" "$url/socket.io/?EIO=4&transport=polling"; do
	evil=$(curl -s -o /dev/null -D - -H 'Origin: http://evil.example' $req | tr -d '\r')
	grep -qi '^access-control-' <<<"$evil" && fail "CORS headers for an origin not in --cors-origins: $evil"
done
echo "ok   CORS: an origin not in --cors-origins gets no CORS headers"
for path in /metrics /healthz; do
	h=$(curl -s -o /dev/null -D - -H 'Origin: http://app.example' "$url$path" | tr -d '\r')
	grep -qi '^access-control-' <<<"$h" && fail "CORS headers on $path: $h"
done
echo "ok   CORS: none on /metrics and /healthz, even for an allowed origin"

# clients count, then SIGTERM while they are connected
node shutdown_peer.mjs >"$H_DIR/peer.out" 2>&1 &
peer=$!
harness_wait_for 10 healthz_has '"clients":2' || fail "clients not counted"
echo "ok   /healthz counts clients"

# (Redis down is reported once the consumer's command connection notices; Postgres at once.)
harness_pg_ctl -m fast -w stop >/dev/null
harness_wait_value 20 = 503 healthz_code || fail "no 503 with Postgres down"
echo "ok   /healthz 503 while Postgres is down: $(curl -s $url/healthz)"
harness_pg_ctl -w start >/dev/null
harness_wait_value 30 = 200 healthz_code || fail "no 200 after Postgres is back"
echo "ok   /healthz 200 again"
harness_wait_value 10 -ge 1 metric chat_outboxd_postgres_reconnects_total
echo "ok   chat_outboxd_postgres_reconnects_total $(metric chat_outboxd_postgres_reconnects_total) after the Postgres restart"

daemon_stop || fail "daemon did not exit 0 on SIGTERM"
wait $peer || { cat "$H_DIR/peer.out"; fail "peer"; }
cat "$H_DIR/peer.out"

# --metrics-listen host:port: /metrics (and /healthz) there, no /metrics on the public listener.
mport=$(harness_free_port)
DAEMON_FLAGS=(--service workers --queue chat-messages --metrics-listen "127.0.0.1:$mport")
daemon_start_again
daemon_wait_healthy
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/metrics")
[ "$code" = 404 ] || fail "/metrics on the public listener with --metrics-listen: $code"
grep -q '^chat_outboxd_gateway_frames_pushed_total ' <(curl -s "http://127.0.0.1:$mport/metrics") || fail "no /metrics on --metrics-listen"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/healthz")
[ "$code" = 200 ] || fail "/healthz on --metrics-listen: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/socket.io/?EIO=4&transport=polling")
[ "$code" = 404 ] || fail "Engine.IO on the metrics listener: $code"
echo "ok   --metrics-listen: /metrics on its own port only"
# A --listen or --metrics-listen the daemon cannot listen on stops it at start, exit 2, one line naming the
# flag, the address and why: in use (the daemon above holds $mport and its --listen), and an address that is
# not on this machine (192.0.2.1, TEST-NET-1), which libwebsockets alone accepted and retried in the
# background, silently.
listen_refused() { # <flag> <address> <reason>
	local log=refused-$RANDOM.log rc=0
	daemon_run 20 "$log" --service workers --queue chat-messages "$1" "$2" || rc=$?
	[ "$rc" = 2 ] || fail "$1 $2: exit $rc, want 2: $(cat "$H_DIR/$log")"
	expect_eq "$1 $2: its error line" "chat-outboxd: $1: cannot listen on $2: $3" \
		"$(grep -v '^[0-9]* [0-9-]* ' "$H_DIR/$log")"
}
listen_refused --metrics-listen "127.0.0.1:$mport" "Address already in use"
listen_refused --metrics-listen "192.0.2.1:$mport" "Cannot assign requested address"
listen_refused --listen "127.0.0.1:$DAEMON_PORT" "Address already in use"
listen_refused --listen "192.0.2.1:$DAEMON_PORT" "Cannot assign requested address"
echo "ok   --listen or --metrics-listen in use or not an address of this machine: exit 2 at start, the address named"
daemon_stop || fail "daemon did not exit 0 on SIGTERM"
DAEMON_FLAGS=(--service workers --queue chat-messages --metrics-listen off)
daemon_start_again
daemon_wait_healthy
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/metrics")
[ "$code" = 404 ] || fail "/metrics with --metrics-listen off: $code"
echo "ok   --metrics-listen off: no /metrics"
daemon_stop || fail "daemon did not exit 0 on SIGTERM"

# Out of descriptors: a daemon allowed 64 accepts connections that send half a head until accept fails
# (EMFILE); it says so once, retries every second, and once those connections are closed it accepts again
# and serves.
(
	ulimit -n 64
	exec "$CHAT_OUTBOXD" --listen "127.0.0.1:$DAEMON_PORT" --service workers --queue chat-messages
) >>"$H_DIR/fds.log" 2>&1 &
DAEMON_PID=$!
harness_track "$DAEMON_PID"
daemon_wait_healthy
held=()
for _ in $(seq 80); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$DAEMON_PORT"
	printf 'GET /healthz HTTP/1.1\r\n' >&"$fd"
	held+=("$fd")
done
failing='gateway: --listen cannot accept connections (Too many open files); retrying every second'
harness_wait_for 20 grep -qF "$failing" "$H_DIR/fds.log" || fail "no line for the failing accept: $(tail -5 "$H_DIR/fds.log")"
for fd in "${held[@]}"; do exec {fd}>&-; done
harness_wait_for 20 grep -qF 'gateway: --listen accepts connections again' "$H_DIR/fds.log" ||
	fail "no line for accepting again: $(tail -5 "$H_DIR/fds.log")"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$url/healthz")
[ "$code" = 200 ] || fail "/healthz after the descriptors came back: $code"
expect_eq "lines for the failing accept" 1 "$(grep -cF "$failing" "$H_DIR/fds.log")"
echo "ok   out of descriptors: accept failing said once, retried, accepting again and serving once they are back"
daemon_stop || fail "daemon did not exit 0 on SIGTERM"
echo "all checks passed"
