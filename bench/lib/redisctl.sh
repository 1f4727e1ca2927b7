#!/usr/bin/env bash
# bench/lib/redisctl.sh up|down|kill - stop/start the benchmark's Redis (same port, same AOF data)
# from the Node runner, using tests/harness/lib.sh. Needs REDIS_PORT, REDIS_DIR, REDIS_PIDFILE, H_DIR.
set -euo pipefail
. "$(dirname "$0")/../../tests/harness/lib.sh"
case "${1:-}" in
up) harness_redis_start_again ;;
down) harness_redis_stop ;;
kill) harness_redis_kill ;;
*) echo "usage: $0 up|down|kill" >&2; exit 2 ;;
esac
