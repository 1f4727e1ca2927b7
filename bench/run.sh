#!/usr/bin/env bash
# bench/run.sh - the one command: the write-up's Node.js design (v1, v2, v2 polling) and ours
# (chat_outbox relay + chat-outboxd, wake at commit and polling-only) on the same PostgreSQL 15
# and Redis, one after the other; prints one report of tables.
#
#   bench/run.sh [--quick] [--sustained MINUTES] [--only latency,throughput,raw,recovery,fanout] [--out DIR]
#
#   --quick          fewer/shorter runs (a smoke check of the runner, figures not meaningful)
#   --sustained M    also run M minutes at half the maximum delivered rate (not for CI)
#   --rate R         sustained rate in msg/s (default: half the best delivered rate measured in this run)
#   --retention T    chat_outbox.retention during the sustained run (default 5min, so the purge shows)
#   --sustained-relay off   the sustained run's sends with the relay paused: the send alone, its commit's
#                    latency per window without any relay, Redis or inbox work beside it
#   --only LIST      run only these sections (latency,throughput,raw,recovery,cost,fanout,sustained)
#   --out DIR        where results.md, results.json and the plots go (default build/bench); each plot
#                    is <name>.dat (its points), <name>.png and <name>.svg: `node bench/lib/plot.mjs DIR`
#                    draws them again from the .dat files
# Env: FANOUT_SETTLE_MS (500): the fan-out section's wait between the last socket connected and the first send
#      BENCH_PG_CONF: lines added to the server's postgresql.conf (one per line), e.g. 'checkpoint_timeout = 15min'
#      BENCH_EXT_VERSION: CREATE EXTENSION chat_outbox VERSION that one (an earlier version as released, to
#      compare it with the current one on the same build)
# "ours" rows print "not available" when CREATE EXTENSION chat_outbox fails or
# build/daemon/chat-outboxd is missing. Speed is printed, never asserted.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. tests/harness/lib.sh
. bench/lib/pg.sh

command -v node >/dev/null || { echo "bench: node is required" >&2; exit 1; }
command -v pgbench >/dev/null || { echo "bench: pgbench (postgresql-client-15) is required" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "bench: gnuplot (Debian package gnuplot-nox, installed by scripts/setup.sh) is required for the plots" >&2; exit 1; }

# npm packages of the baseline (pinned by bench/baseline/package-lock.json)
if [ ! -d bench/baseline/node_modules ] || [ bench/baseline/package-lock.json -nt bench/baseline/node_modules/.package-lock.json ]; then
	(cd bench/baseline && npm ci --no-audit --no-fund --loglevel=error)
fi

# 10,000 socket.io clients in one process need file descriptors
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

harness_init bench
harness_redis_start
bench_pg_start
psql -XAtq -v ON_ERROR_STOP=1 "$BASELINE_URL" -f bench/baseline/schema.sql >/dev/null
if [ "$OURS_EXT" != 1 ]; then echo "bench: ours: extension not available ($OURS_EXT_ERROR)" | head -1 >&2; fi

export REDIS_PORT REDIS_URL REDIS_DIR REDIS_PIDFILE H_DIR BENCH_LOG_DIR=$H_DIR
node bench/lib/main.mjs "$@"
