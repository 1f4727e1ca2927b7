#!/usr/bin/env bash
# tests/ha/sentinel_switch.sh - Sentinel switches the master while the old one stays up (SENTINEL
# FAILOVER): chat-outboxd must leave the old master when the sentinels announce the new one, not
# seconds later when Sentinel reconfigures the old node as a replica and closes its clients; and its one
# Sentinel watch moves to another sentinel when the watched one dies. Both directions, both client kinds:
# see sentinel_switch.mjs. Two replicas, so the relay's WAIT 1 finds one on the new master at once.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/sentinel.sh"
HA_REPLICAS=2 sentinel_env ha-sentinel-switch
export CHAT_OUTBOX_RELAY_REDIS_MIN_REPLICAS=1 CHAT_OUTBOX_RELAY_REDIS_TIMEOUT=1000
harness_pg_start "" "chat_outbox.redis_min_replicas = 1" "chat_outbox.redis_timeout = 1000"
daemon_export_settings
cd "$(dirname "$0")"
DAEMON_PORT=$(harness_free_port) DAEMON_PORT2=$(harness_free_port) node sentinel_switch.mjs 2>>"$H_DIR/daemon.log"
# from the daemons' log: the watch's moves, when each connection heard of the switch and reached the new master (figures)
grep -h "redis sentinel watch: \|asking the sentinels again\|redis master 'mymaster' is at .*, was" "$H_DIR/daemon.log" | cut -c1-200 || true
# the second failover was announced while the watched sentinel was stopped: both daemons (by pid) left the
# old master when their watch, moved to another sentinel, asked it where the master is
n=$(grep "as master 'mymaster' (get-master-addr-by-name), asking the sentinels again" "$H_DIR/daemon.log" | awk '{print $1}' | sort -u | wc -l)
expect_eq "daemons moved by their watch's question after it moved" 2 "$n"
