#!/usr/bin/env bash
# tests/gateway/haproxy.sh - long-polling clients behind a real HAProxy (Debian's haproxy) in front of
# two chat-outboxd of one service, with the configuration the README documents (docs/haproxy.cfg,
# addresses replaced): every client is shown every message once, in order. The same two instances
# behind a frontend without stickiness: a polling client gets a clear error, never a silent loss.
# bus.mjs (phase haproxy) checks it.
. "$(dirname "$0")/../harness/lib.sh"
command -v haproxy >/dev/null || fail "haproxy is not installed (scripts/setup.sh installs it)"
daemon_env gateway-haproxy
ports=()
for _ in 1 2; do ports+=("$(harness_free_port)"); done
sticky=$(harness_free_port)
plain=$(harness_free_port)
cfg=$H_DIR/haproxy.cfg
# The documented file, with this test's addresses; then a second frontend without stickiness.
sed -e "s/bind :8080/bind 127.0.0.1:$sticky/" -e "s/10.0.0.1:8080/127.0.0.1:${ports[0]}/" \
	-e "s/10.0.0.2:8080/127.0.0.1:${ports[1]}/" "$H_ROOT/docs/haproxy.cfg" >"$cfg"
grep "bind 127.0.0.1:$sticky" "$cfg" >/dev/null && grep "127.0.0.1:${ports[1]}" "$cfg" >/dev/null || fail "docs/haproxy.cfg no longer has the lines this test replaces"
cat >>"$cfg" <<CFG

frontend no_stickiness
    bind 127.0.0.1:$plain
    default_backend round_robin

backend round_robin
    balance roundrobin
    server gw1 127.0.0.1:${ports[0]}
    server gw2 127.0.0.1:${ports[1]}
CFG
# The README shows the same file.
missing=$(grep -v '^#' "$H_ROOT/docs/haproxy.cfg" | grep -v '^$' | grep -vxFf "$H_ROOT/README.md" || true)
[ -z "$missing" ] || fail "README.md's HAProxy example differs from docs/haproxy.cfg in: $missing"
haproxy -c -f "$cfg" >>"$H_DIR/haproxy.log" 2>&1 || fail "haproxy refuses $cfg"
haproxy -db -f "$cfg" >>"$H_DIR/haproxy.log" 2>&1 &
harness_track $!
BUS_PORTS=$(IFS=,; echo "${ports[*]}")
DAEMON_URL=http://127.0.0.1:${ports[0]} # peer_lib.mjs' default daemon
STICKY_URL=http://127.0.0.1:$sticky
PLAIN_URL=http://127.0.0.1:$plain
export BUS_PORTS DAEMON_URL STICKY_URL PLAIN_URL H_DIR
cd "$(dirname "$0")"
node bus.mjs haproxy 2>>"$H_DIR/daemons.log"
