#!/usr/bin/env bash
# tests/faults/soak_ha.sh - the chaos soak on the production topology (soak.sh --topology ha):
# scripts/cluster.sh starts Patroni+etcd, Redis with two replicas and three sentinels (--topology ha) or a
# Redis Cluster of 3 masters with two replicas each (--topology ha-cluster: CLUSTER_REDIS=cluster), and two
# gateways per service behind HAProxy, in a fresh directory on free ports; soak_ha.mjs injects failovers
# and counts.
#   tests/faults/soak.sh --topology ha|ha-cluster [--seconds S] [--seed N] [--rounds N --faults ...]
# Runs the installed extension and build/daemon/chat-outboxd (run it under the private install).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
args=()
while [ $# -gt 0 ]; do # soak.sh passes --topology on; the rest goes to soak_ha.mjs
	case $1 in
	--topology)
		[ "${2:-}" != ha-cluster ] || export CLUSTER_REDIS=cluster
		shift 2
		;;
	*) args+=("$1"); shift ;;
	esac
done

# a base with its 64 ports free (cluster.sh uses base .. base+63), in 10000-19983: below the test harness's
# ports (20000-32767, tests/harness/lib.sh) and below the kernel's ephemeral range (32768 and up), where a
# client's outgoing connection could take a port a node is about to listen on
# (a CLUSTER_PORT_BASE in the environment is kept: a run by hand beside others takes its own range)
listening=$(ss -Htln | awk '{print $4}' | sed 's/.*://' | sort -u)
for _ in $(seq 1 50); do
	base=${CLUSTER_PORT_BASE:-$((10000 + 64 * (RANDOM % 155)))}
	clash=0
	for p in $listening; do [ "$p" -ge "$base" ] && [ "$p" -lt $((base + 64)) ] && { clash=1; break; }; done
	[ $clash = 0 ] && break
	[ -z "${CLUSTER_PORT_BASE:-}" ] || { echo "soak_ha: a port of $base..$((base + 63)) is taken" >&2; exit 1; }
done
export CLUSTER_PORT_BASE=$base
export CLUSTER_DIR=${CLUSTER_DIR:-$(mktemp -d /tmp/soak-ha.XXXXXX)}
chmod 755 "$CLUSTER_DIR"
trap '"$ROOT/scripts/cluster.sh" stop >/dev/null 2>&1 || true' EXIT
"$ROOT/scripts/cluster.sh" start
eval "$("$ROOT/scripts/cluster.sh" env | sed 's/^/export /')"
CHAT_OUTBOXD_JWT_SECRET=$(cat "$CLUSTER_DIR/jwt-secret")
export CHAT_OUTBOXD_JWT_SECRET
cd "$HERE"
node soak_ha.mjs "${args[@]}"
