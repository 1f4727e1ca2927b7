#!/usr/bin/env bash
# bench/scale/sockets.sh - PER sockets on each of GATEWAYS gateways of service workers (30,000 in total by default),
# one room; one message sent three times; prints connect time, send -> socket times and each gateway's RSS and CPU
# (docs/journal/scale.md, "Sockets across three gateways"). The open-file limit of this machine's processes is the
# hard limit (`ulimit -Hn`); each gateway and each client process needs PER descriptors and some.
# Env: PER (10000), GATEWAYS (3).
# Run from a clone after scripts/setup.sh (it builds the daemon and installs the extension): bash bench/scale/sockets.sh
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
. "$(dirname "$0")/../lib/ticks.sh"
PER=${PER:-10000} GATEWAYS=${GATEWAYS:-3}
ulimit -n "$(ulimit -Hn)"
daemon_env bench-sockets
ports=() pids=()
for i in $(seq 1 "$GATEWAYS"); do
	daemon_start "gw$i.log" --service workers --queue chat-messages --identity "gw$i" --log-level notice
	pids+=("$DAEMON_PID") ports+=("$DAEMON_PORT")
	daemon_wait_healthy
done
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
echo "# $(date -u +%FT%TZ) $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg); open files limit $(ulimit -n); $GATEWAYS gateways x $PER sockets"
before=() cpu0=()
for p in "${pids[@]}"; do before+=("$(rss "$p")") cpu0+=("$(ticks "$p")"); done
GW_PIDS="${pids[*]}" NODE_PATH="$H_ROOT/tests/node_modules" node "$H_ROOT/bench/scale/sockets.mjs" "$PER" "${ports[@]}"
for i in "${!pids[@]}"; do
	p=${pids[$i]}
	echo "gateway $((i + 1)): RSS ${before[$i]} -> $(rss "$p") kB; CPU $(( ($(ticks "$p") - ${cpu0[$i]}) * 10 )) ms over the run"
done
daemons_stop "${pids[@]}"
