#!/usr/bin/env bash
# bench/send_versions.sh - send_message of two installed extension versions side by side, in one run:
# one throwaway PostgreSQL 15 cluster (the installed extension preloaded, the relay off: the send
# alone), one database per version (CREATE EXTENSION chat_outbox VERSION '<v>'), and pgbench sending
# one message per transaction (1 client, synchronous_commit off) against each in turn, A B A B ..., so
# the machine's drift falls on both. Prints each run's tps, each version's median and the median of the
# rounds' ratios (B/A: above 1, B sends faster).
#   bench/send_versions.sh [A] [B] [transactions] [rounds]      defaults: 1.5 1.6 20000 5
# Run as root (the cluster runs as postgres) or as a user that may run initdb; nothing else is touched.
set -euo pipefail
A=${1:-1.5}
B=${2:-1.6}
N=${3:-20000}
ROUNDS=${4:-5}
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
DIR=$(mktemp -d /tmp/send-versions.XXXXXX)
PORT=55433
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" != 0 ] || chown postgres "$DIR"
chmod 755 "$DIR"
as_pg "$BIN/initdb" -D "$DIR/data" -A trust >/dev/null
cat >>"$DIR/data/postgresql.conf" <<CONF
port = $PORT
unix_socket_directories = '$DIR'
listen_addresses = ''
shared_preload_libraries = 'chat_outbox'
chat_outbox.database = 'none'
chat_outbox.relay_enabled = off
synchronous_commit = off
CONF
as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/pg.log" -w start >/dev/null
trap 'as_pg "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
sql() { psql -h "$DIR" -p "$PORT" -U postgres -XAtq -v ON_ERROR_STOP=1 "$@"; }
db() { echo "v${1//./_}"; }
for v in "$A" "$B"; do
	sql -c "CREATE DATABASE $(db "$v")" postgres
	sql -c "CREATE EXTENSION chat_outbox VERSION '$v'" "$(db "$v")"
done
echo "SELECT consumers.send_message(1, 'a message of ordinary length, sent alone');" >"$DIR/send.sql"
tps() { "$BIN/pgbench" -n -f "$DIR/send.sql" -t "$N" -h "$DIR" -p "$PORT" -U postgres "$(db "$1")" 2>/dev/null |
	sed -n 's/^tps = \([0-9.]*\) .*/\1/p'; }
tps "$A" >/dev/null; tps "$B" >/dev/null # warm-up, not counted
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
declare -A runs
ratios=""
for r in $(seq 1 "$ROUNDS"); do
	ta=$(tps "$A")
	tb=$(tps "$B")
	runs[$A]+="$ta "
	runs[$B]+="$tb "
	ratio=$(awk -v a="$ta" -v b="$tb" 'BEGIN {printf "%.3f", b / a}')
	ratios+="$ratio "
	echo "round $r: $A $ta tps, $B $tb tps, $B/$A $ratio"
done
for v in "$A" "$B"; do
	echo "$v median: $(printf '%s\n' ${runs[$v]} | median) tps ($N sends per run)"
done
# the ratio of each round's pair is what holds when the machine's speed drifts between rounds
echo "$B/$A median of the rounds' ratios: $(printf '%s\n' $ratios | median)"
