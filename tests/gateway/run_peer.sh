#!/usr/bin/env bash
# tests/gateway/run_peer.sh <peer.mjs> [chat-outboxd flags...] - a gateway suite that is one Node
# peer against one daemon: gateway_start, then the peer; its exit status is the suite's.
. "$(dirname "$0")/gateway.sh"
peer=$1
shift
gateway_start "gateway-${peer%.mjs}" "$@"
cd "$(dirname "$0")"
node "$peer"
