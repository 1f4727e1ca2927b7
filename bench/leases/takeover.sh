#!/usr/bin/env bash
# bench/leases/takeover.sh - how long a SIGKILLed consumer's partitions wait for another (docs/journal/leases-takeover.md).
# Two chat-outboxd share 4 partitions of one queue (one Redis). KILLS times: freeze one daemon (SIGSTOP: t0,
# the moment it stops renewing), add one job to each of its partitions, SIGKILL it, then measure from t0
#   lease: until the survivor holds every lease (polled every 10 ms),
#   job:   until the jobs added to the killed daemon's partitions are in the inbox;
# then restart the killed daemon (same identity) and wait for the 2/2 split again.
# Env: KILLS (10), TTL (--lease-ttl, default the daemon's 5000).
# Run from a clone after scripts/setup.sh (it builds the daemon and installs the extension): bash bench/leases/takeover.sh
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
KILLS=${KILLS:-10} TTL=${TTL:-5000}
daemon_env bench-leases
Q=b-leases
rcli SET "bull:$Q:partitions" 4 >/dev/null
now_ms() { date +%s%3N; }
lease() { local v; v=$(rcli GET "bull:$Q-p$1:lease"); echo "${v%#*}"; } # its identity (<identity>#<token>)
held_by() { local n=0 k; for k in 0 1 2 3; do [ "$(lease $k)" != "$1" ] || n=$((n + 1)); done; echo $n; }
start() {
	daemon_start "$1.log" --service workers --queue $Q --identity "$1" --lease-ttl "$TTL" --log-level notice
	eval "PID_$1=$DAEMON_PID"
}
start a
start b
harness_wait_value 30 -eq 2 held_by a
harness_wait_value 30 -eq 2 held_by b

echo "# $(date -u +%FT%TZ) $(nproc) cores; --lease-ttl $TTL; $KILLS kills"
leases=() jobs=()
for i in $(seq 1 "$KILLS"); do
	victim=a survivor=b
	[ $((i % 2)) = 0 ] && victim=b survivor=a
	pid_var=PID_$victim
	mine=()
	for k in 0 1 2 3; do [ "$(lease $k)" != "$victim" ] || mine+=("$k"); done
	kill -STOP "${!pid_var}"
	t0=$(now_ms)
	before=$(inbox_count workers)
	for k in "${mine[@]}"; do peer add "$Q-p$k" 1 "$k" >/dev/null; done
	kill -KILL "${!pid_var}"
	while [ "$(held_by $survivor)" != 4 ]; do sleep 0.01; done
	t_lease=$(($(now_ms) - t0))
	while [ "$(inbox_count workers)" -lt $((before + ${#mine[@]})) ]; do sleep 0.01; done
	t_job=$(($(now_ms) - t0))
	echo "kill $i ($victim, partitions ${mine[*]}): lease ${t_lease} ms, jobs in the inbox ${t_job} ms"
	leases+=("$t_lease") jobs+=("$t_job")
	start "$victim"
	harness_wait_value 60 -eq 2 held_by "$victim"
	harness_wait_value 60 -eq 2 held_by "$survivor"
done
stats() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {printf "p50 %d ms, max %d ms (n=%d)\n", v[int((NR + 1) / 2)], v[NR], NR}'; }
echo "lease takeover: $(stats "${leases[@]}")"
echo "jobs consumed:  $(stats "${jobs[@]}")"
