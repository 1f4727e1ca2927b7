#!/usr/bin/env bash
# tests/ha/sentinel_live_master.sh - Sentinel fails over a master that stays alive, and the relay must not lose
# what it committed there (docs/ha.md, "Known defect: a failover of a master that is still alive"). Deterministic,
# not load-dependent: the old master M keeps a replica R2 that Sentinel can neither promote (replica-priority 0)
# nor move (its REPLICAOF and SLAVEOF renamed away), so after Sentinel promotes R1 (SLAVEOF NO ONE) M goes on
# taking the relay's passes and R2 goes on meeting their `WAIT 1`, through the whole failover-timeout (sentinel.sh:
# 10 s) and until Sentinel demotes M, which then resyncs from R1 and drops every job written to it since the
# promotion. The relay under test is the extension's background worker; run through
# tests/managed/in_managed_mode.sh it is chat-outbox-relay. Both with redis_min_replicas = 1. Messages flow the
# whole time, both directions: see sentinel_live_master.mjs, which counts lost, twice and out of order.
# An extra (not what the suite is about): when the old master took jobs after the promotion, the relay logs that
# it sends committed rows again (`sending them again`) once it meets a Redis behind what it committed.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/sentinel.sh"
sentinel_env ha-sentinel-live-master
# R2: Sentinel's SLAVEOF (and REPLICAOF) are unknown commands to it, and it is never a candidate for promotion
R2_PORT=$(harness_free_port)
redis_start_node "$R2_PORT" "$H_DIR/redis-$R2_PORT" --replicaof 127.0.0.1 "$REDIS_PORT" --replica-priority 0 \
	--rename-command REPLICAOF '' --rename-command SLAVEOF ''
harness_wait_for 10 sh -c "$SCLI -p $REDIS_PORT INFO replication | grep -q '^connected_slaves:2'"
for port in $SENTINEL_PORTS; do
	harness_wait_value 20 = 2 sh -c "$SCLI -p $port SENTINEL replicas mymaster | grep -c '^name\$' || true"
done
export R2_PORT
export CHAT_OUTBOX_RELAY_REDIS_MIN_REPLICAS=1 CHAT_OUTBOX_RELAY_REDIS_TIMEOUT=1000
harness_pg_start "" "chat_outbox.redis_min_replicas = 1" "chat_outbox.redis_timeout = 1000"
daemon_export_settings
cd "$(dirname "$0")"
rc=0
FIGURES=$H_DIR/figures DAEMON_PORT=$(harness_free_port) DAEMON_PORT2=$(harness_free_port) \
	node sentinel_live_master.mjs 2>>"$H_DIR/daemon.log" || rc=$?
took=$(sed -n 's/^old_master_took=//p' "$H_DIR/figures" 2>/dev/null || true)
again=$(relay_log_lines "sending them again")
echo "relay log lines 'sending them again': $again (the old master took ${took:-?} jobs after the promotion)"
[ "$rc" = 0 ] || fail "messages lost, shown twice or out of order, or rows left unsent (above)"
# the extra: the relay said why it sent those rows again
[ "${took:-0}" = 0 ] || [ "$again" -ge 1 ] || fail "the old master took $took jobs after the promotion, and the relay never logged 'sending them again'"
