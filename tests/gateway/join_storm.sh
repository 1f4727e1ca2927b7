#!/usr/bin/env bash
# tests/gateway/join_storm.sh - a storm of members of one chat joining at once costs the database one read per
# chat per round trip, not one per socket (join_storm.mjs): the test's own cluster logs every statement
# (log_statement = 'all', from its start, so the daemon's connection logs too) and the peer counts them.
. "$(dirname "$0")/gateway.sh"
harness_init gateway-join-storm
harness_redis_start
harness_pg_start "" "log_statement = 'all'"
daemon_export_settings
# Pages of 5 rows: every replay from the start needs several pages, all of them shared.
daemon_start daemon.log --service workers --queue chat-messages --catchup-limit 5
export DAEMON_URL H_DIR
daemon_wait_healthy
cd "$(dirname "$0")"
node join_storm.mjs
