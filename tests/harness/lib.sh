# tests/harness/lib.sh - the shell test harness: start real PostgreSQL and Redis for one test,
# and stop them again. It also loads the rest of the harness, so this one line is all a suite needs:
#   . "$(dirname "$0")/../harness/lib.sh"
#     assert.sh    fail, expect_eq
#     daemon.sh    the one way to start chat-outboxd (daemon_env, daemon_start, daemon_stop, ...)
#     bullmq.sh    a real bullmq producer/observer (peer, peer_bg, wait_counts)
#     relay.sh     the one way to start chat-outbox-relay, the relay of the managed install
#     redis_cluster.sh  a Redis Cluster of 3 masters and 3 replicas (cluster_start, cluster_kill, ...)
#
#   harness_init <name>                 scratch dir $H_DIR ($H_TMP/<name>, default build/test-tmp),
#                                       a short socket dir $H_SOCK under /tmp, traps cleanup
#   The server: PostgreSQL 15 from Debian (/usr/lib/postgresql/15/bin), the one the extension is
#   built for. PG_MAJOR=16, 17 or 18 (tests/managed/on_version.sh): that major's server from the
#   npm package pg<major> in tests/node_modules (tests/package.json pins it; only initdb, postgres
#   and pg_ctl, which find their libraries by their RUNPATH), for the managed mode only. PG_BIN
#   overrides either. Clients (psql) are always Debian's on the PATH: psql 15 talks to 16-18.
#   harness_redis_start [port]          redis-server, appendonly yes, noeviction; sets $REDIS_PORT $REDIS_URL
#   The server: $HARNESS_REDIS_SERVER, Debian's redis-server (7.0) unless set; valkey-server (8, from
#   bookworm-backports) with HARNESS_REDIS_SERVER=valkey-server (tests/valkey/on_valkey.sh). Every Redis a
#   suite starts (shards.sh, ha/sentinel.sh's nodes, cluster nodes) is that binary; redis-cli talks to both, and
#   $HARNESS_REDIS_CLI (valkey-cli on Valkey) runs the cluster tools (--cluster create, reshard).
#   harness_redis_stop / _kill / _start_again
#   harness_pg_start [port] [conf...]   a cluster (harness_initdb, owned by an unprivileged user when run as root),
#                                       shared_preload_libraries=chat_outbox, database "chat",
#                                       CREATE EXTENSION; sets $PG_PORT $PGURL (libpq URI)
#                                       With HARNESS_PG_MANAGED=1, a managed service's setup instead:
#                                       empty shared_preload_libraries, no extension, database "chat"
#                                       owned by the non-superuser role chat_owner, which runs
#                                       sql/managed/chat_outbox_managed.sql; $PGURL connects as
#                                       chat_owner, $PG_SUPER_URL as postgres (the provider's admin);
#                                       HARNESS_MANAGED_RELAY=1 also starts a chat-outbox-relay;
#                                       HARNESS_MANAGED_WAKE=logical: wal_level = logical, chat_owner
#                                       with REPLICATION, chat_outbox.settings.wake = 'wal', and every
#                                       relay_start'ed relay woken by logical decoding (--wake logical)
#                                       HARNESS_INSTALL_VERSION=1.0 to 1.5: install that version instead of the
#                                       current version (the update suites): the base of sql/released/ and the
#                                       updates after it (the extension's chained by CREATE EXTENSION ... VERSION)
#   harness_pg_cluster <data dir> [port] [conf...]  another cluster beside the test's, from the same
#                                       binaries: a new initdb in <data dir> (not a copy of
#                                       harness_initdb's, so its own system_identifier), configured as
#                                       harness_pg_start configures its own (loopback, $H_SOCK, the extension
#                                       preloaded with chat_outbox.database = 'chat' and $REDIS_URL, or
#                                       nothing preloaded with HARNESS_PG_MANAGED=1), the conf lines
#                                       appended, started, logging to <data dir>.log; no database or role
#                                       made in it (the suite makes what it moves there). Sets
#                                       $CLUSTER_PORT; stopped on exit. For tests that move a database
#                                       between clusters (pg_dump/pg_restore, logical replication)
#   harness_pg_ctl_at <data dir> <args> pg_ctl on such a cluster as its owner
#   harness_psql <sql>                  psql -XAtq against $PGURL, stops on error
#   harness_ext_version                 the extension's current version (chat_outbox.control's default_version)
#   harness_managed_updates <version>   the versions after <version> whose managed update
#                                       (sql/managed/update_<v>.sql, released or built) leads to the current one, in order
#   q <sql>                             the same, for suites that query a lot
#   relay_status <column> [url]         that column of chat_outbox.status for service consumers
#   rcli <args...>                      redis-cli against this test's Redis (with $REDIS_CLI_AUTH)
#   redis_conns_of <pid>                the local address:port of each connection that process has open to this test's Redis (ss)
#   harness_pg_ctl <args>               pg_ctl on the test cluster as its owner
#   harness_free_port                   an unused loopback TCP port
#   harness_wait_for <s> <command...>   poll until the command succeeds (fails after s seconds)
#   harness_wait_value <s> <op> <want> <command...>  poll until [ "$(command)" <op> <want> ]
#   harness_export_controls             export how to stop/start Redis and Postgres to test peers
# Everything started is stopped in the EXIT trap (the tracked pids, every process still running below
# the test, the servers by their pid files), so a failing test leaves nothing behind.
# Logs stay in $H_DIR and are printed on failure.
# Unix sockets live in $H_SOCK, never in $H_DIR: a socket path may not exceed 107 bytes, and a
# checkout in a deep folder (a CI runner's workspace) would push $H_DIR past that.
# Rule under pipefail: never end a pipe in `grep -q` (it exits at the first match, the writer gets
# SIGPIPE when it writes on, and the pipe fails although the line was there); write
# `producer | grep PATTERN >/dev/null`, which reads to the end. The same holds for `| head`: use
# `grep -m N` or `find -print -quit` instead.

set -euo pipefail

H_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Debian's python3 (scripts/setup.sh installs it), never a version manager's shim found first on the
# PATH: a pyenv shim costs over a second of CPU per call, and the harness calls it for every port.
python3() { /usr/bin/python3 "$@"; }
PG_MAJOR=${PG_MAJOR:-15}
if [ "$PG_MAJOR" = 15 ]; then
	PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
else
	PG_BIN=${PG_BIN:-$H_ROOT/tests/node_modules/pg$PG_MAJOR/native/bin}
fi
PG_USER=${PG_USER:-postgres}
HARNESS_REDIS_SERVER=${HARNESS_REDIS_SERVER:-redis-server}
HARNESS_REDIS_CLI=${HARNESS_REDIS_CLI:-redis-cli} # the cluster tools' (--cluster create, reshard): the server's own
H_PIDS=()
H_PG_CLUSTERS=() # the data dirs of harness_pg_cluster's clusters

harness_as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u "$PG_USER" -- "$@"; else "$@"; fi
}

# Ports come from 20000-32767, below the kernel's ephemeral range (32768 and up on Linux), so no
# outgoing connection of any process can take a port a test is about to listen on (or listen on again
# after a restart), and from one counter under flock for every suite of a run, so suites that run side
# by side (ctest -j) never get the same port. A port something else holds is skipped.
harness_free_port() {
	python3 - "${H_TMP:-$H_ROOT/build/test-tmp}/.ports" <<'PY'
import fcntl, os, random, socket, sys
LOW, HIGH = 20000, 32768
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
with open(sys.argv[1], 'a+') as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.seek(0)
    text = f.read().strip()
    port = int(text) if text else random.randrange(LOW, HIGH)
    for _ in range(HIGH - LOW):
        port = LOW if port + 1 >= HIGH else port + 1
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        break
    else:
        sys.exit("no free port in %d-%d" % (LOW, HIGH - 1))
    f.seek(0); f.truncate(); f.write(str(port))
print(port)
PY
}

harness_init() {
	H_NAME=$1
	# the same suite in managed mode gets its own scratch dir, so both modes can run at once
	[ "${HARNESS_PG_MANAGED:-0}" != 1 ] || H_NAME=$1-managed
	[ "${HARNESS_MANAGED_WAKE:-notify}" != logical ] || H_NAME=$H_NAME-logical
	[ "$PG_MAJOR" = 15 ] || H_NAME=$H_NAME-pg$PG_MAJOR
	[ "$HARNESS_REDIS_SERVER" = redis-server ] || H_NAME=$H_NAME-$(basename "$HARNESS_REDIS_SERVER" -server)
	H_DIR=${H_TMP:-$H_ROOT/build/test-tmp}/$H_NAME
	rm -rf "$H_DIR"
	mkdir -p "$H_DIR"
	chmod 777 "$H_DIR"
	H_SOCK=$(mktemp -d /tmp/co.XXXXXX) # mode 0700: only the servers' owner uses their sockets
	[ "$(id -u)" != 0 ] || chown "$PG_USER" "$H_SOCK"
	trap harness_cleanup EXIT
	trap 'exit 130' INT TERM
}

# harness_descendants <pid>: every process below pid, parents before their children.
harness_descendants() {
	local child
	for child in $(ps -o pid= --ppid "$1"); do
		echo "$child"
		harness_descendants "$child"
	done
}

harness_cleanup() {
	local rc=$?
	set +e
	# Every process this test started and that still runs below it, read before anything is stopped
	# (a stopped parent's children move to init): a tracked subshell's `node` and untracked
	# background jobs go with the test too (harness.no_leaks). Servers that daemonize (postmaster,
	# redis-server) are not below it and are stopped by their pid files below.
	local below
	below=$(harness_descendants $$)
	H_PIDS+=($below)
	for pid in "${H_PIDS[@]}"; do kill -CONT "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done
	local data
	for data in ${PG_DATA:-} "${H_PG_CLUSTERS[@]}"; do
		[ -f "$data/postmaster.pid" ] && harness_as_pg "$PG_BIN/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1
	done
	if [ -n "${REDIS_PIDFILE:-}" ] && [ -f "$REDIS_PIDFILE" ]; then
		kill -CONT "$(cat "$REDIS_PIDFILE")" 2>/dev/null
		kill "$(cat "$REDIS_PIDFILE")" 2>/dev/null
	fi
	sleep 0.2
	for pid in "${H_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
	[ -n "${H_SOCK:-}" ] && rm -rf "$H_SOCK"
	# A passing suite's PostgreSQL data directories go (the logs stay): a whole run kept about 7 GB of
	# them, and a run on a nearly full disk failed on the next suite's copy. HARNESS_KEEP_DATA=1 keeps them.
	if [ $rc -eq 0 ] && [ "${HARNESS_KEEP_DATA:-0}" != 1 ] && [ -n "${H_DIR:-}" ]; then
		local version
		for version in $(find "$H_DIR" -xdev -maxdepth 4 -name PG_VERSION -type f 2>/dev/null); do
			mountpoint -q "$(dirname "$version")" || rm -rf "$(dirname "$version")"
		done
	fi
	if [ $rc -ne 0 ]; then
		echo "---- $H_NAME failed (rc=$rc); logs in $H_DIR ----" >&2
		for f in "$H_DIR"/*.log; do
			[ -f "$f" ] || continue
			echo "---- tail $f" >&2
			tail -n 40 "$f" >&2
		done
	fi
	exit $rc
}

# harness_track <pid>: stop this process on exit.
harness_track() { H_PIDS+=("$1"); }

# harness_wait_for <seconds> <command...>: poll until the command succeeds. The pause between polls
# grows from 50 ms to 400 ms: a poll is often a psql (a client and a server backend started), and
# suites that each polled 20 times a second for their whole wait took the CPU the others needed.
harness_wait_for() {
	local deadline=$((EPOCHSECONDS + $1)) pause=50
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$EPOCHSECONDS" -lt "$deadline" ] || { echo "timed out waiting for: $*" >&2; return 1; }
		sleep "0.$(printf '%03d' "$pause")"
		[ "$pause" -ge 400 ] || pause=$((pause * 2))
	done
}

harness_value_is() { # harness_value_is <op> <want> <command...>
	local op=$1 want=$2
	shift 2
	[ "$("$@")" "$op" "$want" ]
}

harness_wait_value() {
	local seconds=$1
	shift
	harness_wait_for "$seconds" harness_value_is "$@"
}

harness_redis_start() {
	REDIS_PORT=${1:-${REDIS_PORT:-$(harness_free_port)}}
	REDIS_DIR=$H_DIR/redis
	REDIS_PIDFILE=$REDIS_DIR/redis.pid
	mkdir -p "$REDIS_DIR"
	REDIS_URL=${REDIS_URL:-redis://127.0.0.1:$REDIS_PORT}
	harness_redis_start_again
}

# Starts Redis again on the same port and data (AOF is replayed).
harness_redis_cmd() { # the command line that starts this test's Redis (also for test peers to run)
	echo "$HARNESS_REDIS_SERVER --port $REDIS_PORT --bind 127.0.0.1 --dir $REDIS_DIR --appendonly yes" \
		"--appendfsync everysec --maxmemory-policy noeviction --save '' --daemonize yes" \
		"--pidfile $REDIS_PIDFILE --logfile $H_DIR/redis.log ${REDIS_EXTRA_ARGS:-}"
}

harness_redis_start_again() {
	eval "$(harness_redis_cmd)" >/dev/null
	harness_wait_for 10 rcli ping
}

rcli() { redis-cli -p "$REDIS_PORT" ${REDIS_CLI_AUTH:-} "$@"; }

redis_conns_of() {
	ss -tnpH state established "( dport = :$REDIS_PORT )" | grep "pid=$1," | awk '{ print $3 }' || true
}

# harness_export_controls: hand a test peer (Node) the means to stop and start the servers itself:
# REDIS_PORT REDIS_URL REDIS_PIDFILE REDIS_START PG_CTL PGURL CHAT_OUTBOXD.
harness_export_controls() {
	REDIS_START=$(harness_redis_cmd)
	PG_CTL="$([ "$(id -u)" = 0 ] && echo "runuser -u $PG_USER --") $PG_BIN/pg_ctl -D $PG_DATA -l $H_DIR/postgres.log"
	export REDIS_PORT REDIS_URL REDIS_PIDFILE REDIS_START PG_CTL PGURL CHAT_OUTBOXD
}

harness_redis_down() { ! rcli ping >/dev/null 2>&1; }

harness_redis_stop() { # clean shutdown (AOF flushed)
	rcli shutdown >/dev/null 2>&1 || true
	harness_wait_for 10 harness_redis_down
}

harness_redis_kill() { # SIGKILL: what a crash looks like
	kill -9 "$(cat "$REDIS_PIDFILE")"
	harness_wait_for 10 harness_redis_down
}

harness_pg_ctl() { harness_as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$H_DIR/postgres.log" "$@"; }

# harness_pg_version: the server's version ("16.14"), from its postgres binary run as the user the
# servers run as; fails, saying why, when that user cannot run it or it is not major $PG_MAJOR.
harness_pg_version() {
	local out
	out=$(harness_as_pg "$PG_BIN/postgres" -V 2>&1) ||
		{ echo "cannot run $PG_BIN/postgres as $(harness_as_pg id -un): $out (scripts/setup.sh installs it)" >&2; return 1; }
	out=$(echo "$out" | awk '{print $3}')
	[ "${out%%.*}" = "$PG_MAJOR" ] || { echo "$PG_BIN/postgres is $out, not PostgreSQL $PG_MAJOR" >&2; return 1; }
	echo "$out"
}

# harness_initdb <dir>: a fresh cluster in <dir>. initdb runs once per run and server version (under
# flock, into the run's scratch folder); every cluster is a copy of that one, which costs a fraction
# of the seconds of CPU an initdb does.
harness_initdb() {
	local tmpl version
	version=$(harness_pg_version)
	tmpl=${H_TMP:-$H_ROOT/build/test-tmp}/.initdb-$version
	mkdir -p "$(dirname "$tmpl")"
	(
		flock 9
		if [ ! -f "$tmpl/PG_VERSION" ]; then
			rm -rf "$tmpl"
			mkdir -p "$tmpl"
			chmod 700 "$tmpl"
			[ "$(id -u)" != 0 ] || chown "$PG_USER" "$tmpl"
			harness_as_pg "$PG_BIN/initdb" -D "$tmpl" -U postgres --auth=trust -E UTF8 --locale=C >"$tmpl.log" 2>&1 ||
				{ cat "$tmpl.log" >&2; rm -rf "$tmpl"; exit 1; }
		fi
	) 9>"$tmpl.lock"
	cp -a "$tmpl" "$1"
	{ echo "copied from $tmpl, made by:"; cat "$tmpl.log"; } >"$H_DIR/initdb.log"
}

# harness_pg_conf <data dir> <port> [conf...]: the test clusters' settings (harness_pg_start's and
# harness_pg_cluster's), then the given lines (a later line wins).
harness_pg_conf() {
	local data=$1 port=$2 line
	shift 2
	cat >>"$data/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$H_SOCK'
max_connections = 300
fsync = on
log_line_prefix = '%m [%p] %b '
CONF
	if [ "${HARNESS_PG_MANAGED:-0}" != 1 ]; then
		cat >>"$data/postgresql.conf" <<CONF
shared_preload_libraries = 'chat_outbox'
chat_outbox.database = 'chat'
chat_outbox.redis_url = '${REDIS_URL:-redis://127.0.0.1:6379}'
CONF
	fi
	[ "${HARNESS_PG_MANAGED:-0}" != 1 ] || [ "${HARNESS_MANAGED_WAKE:-notify}" != logical ] ||
		echo "wal_level = logical" >>"$data/postgresql.conf"
	for line in "$@"; do echo "$line" >>"$data/postgresql.conf"; done
}

# harness_extension_here: the extension can be loaded by this PG_MAJOR's server: 15 (the host's), the
# managed mode (no library), or a root of the release that ships the major with the extension installed
# in it (tests/extension/on_major.sh sets HARNESS_EXTENSION_MAJOR there).
harness_extension_here() {
	[ "$PG_MAJOR" = 15 ] || [ "${HARNESS_PG_MANAGED:-0}" = 1 ] || [ "${HARNESS_EXTENSION_MAJOR:-}" = "$PG_MAJOR" ] ||
		{ echo "the extension is built here for PostgreSQL 15; PG_MAJOR=$PG_MAJOR runs the managed mode, or the extension in a root of its release (tests/extension/on_major.sh)" >&2; return 1; }
}

harness_pg_cluster() {
	local data=$1
	CLUSTER_PORT=${2:-$(harness_free_port)}
	shift 2 || shift
	harness_extension_here || return 1
	# initdb itself: a copy of the template would be the same cluster to Postgres (one system_identifier)
	rm -rf "$data"
	mkdir -p "$data"
	chmod 700 "$data"
	[ "$(id -u)" != 0 ] || chown "$PG_USER" "$data"
	harness_as_pg "$PG_BIN/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >"$data.initdb.out" 2>&1 ||
		{ cat "$data.initdb.out" >&2; return 1; }
	harness_pg_conf "$data" "$CLUSTER_PORT" "$@"
	H_PG_CLUSTERS+=("$data")
	harness_pg_ctl_at "$data" -w start >/dev/null
}

harness_pg_ctl_at() {
	local data=$1
	shift
	harness_as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$data.log" "$@"
}

harness_pg_start() {
	PG_PORT=${1:-${PG_PORT:-$(harness_free_port)}}
	shift || true
	PG_DATA=$H_DIR/pgdata
	PG_SOCKDIR=$H_SOCK
	harness_extension_here || return 1
	harness_initdb "$PG_DATA"
	harness_pg_conf "$PG_DATA" "$PG_PORT" "$@"
	harness_pg_ctl -w start >/dev/null
	PG_SUPER_URL="postgresql://postgres@127.0.0.1:$PG_PORT/chat"
	PGURL=$PG_SUPER_URL
	if [ "${HARNESS_PG_MANAGED:-0}" = 1 ]; then
		harness_as_pg psql -XAtq -v ON_ERROR_STOP=1 -h "$PG_SOCKDIR" -p "$PG_PORT" -U postgres -d postgres \
			-c "CREATE ROLE chat_owner LOGIN" -c "CREATE DATABASE chat OWNER chat_owner" >/dev/null
		PGURL="postgresql://chat_owner@127.0.0.1:$PG_PORT/chat"
		local install=$H_ROOT/sql/managed/chat_outbox_managed.sql base v
		# an older version: the base (sql/released/) and the managed updates after it up to that version,
		# as Postgres chains the extension's
		if [ -n "${HARNESS_INSTALL_VERSION:-}" ]; then
			install=$(echo "$H_ROOT"/sql/released/chat_outbox_managed-*.sql)
			base=${install##*-} && base=${base%.sql}
		fi
		psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -f "$install" >"$H_DIR/install.log" 2>&1 ||
			{ cat "$H_DIR/install.log" >&2; return 1; }
		for v in $([ -z "${base:-}" ] || harness_managed_updates "$base"); do
			[ "$(printf '%s\n' "$v" "$HARNESS_INSTALL_VERSION" | sort -V | tail -n 1)" = "$HARNESS_INSTALL_VERSION" ] || break
			psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -f "$H_ROOT/sql/managed/update_$v.sql" >>"$H_DIR/install.log" 2>&1 ||
				{ cat "$H_DIR/install.log" >&2; return 1; }
		done
		if [ "${HARNESS_MANAGED_WAKE:-notify}" = logical ]; then
			# what a provider's admin grants (RDS: rds_replication; Cloud SQL, Azure: REPLICATION)
			psql -XAtq -v ON_ERROR_STOP=1 "$PG_SUPER_URL" -c "ALTER ROLE chat_owner REPLICATION" >/dev/null
			psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "UPDATE chat_outbox.settings SET wake = 'wal'" >/dev/null
		fi
		export PGURL PG_PORT PG_SUPER_URL
		[ "${HARNESS_MANAGED_RELAY:-0}" != 1 ] || relay_start harness
		return
	fi
	export PGURL PG_PORT PG_SUPER_URL
	harness_as_pg psql -XAtq -h "$PG_SOCKDIR" -p "$PG_PORT" -U postgres -d postgres \
		-c "CREATE DATABASE chat" >/dev/null
	harness_psql "CREATE EXTENSION chat_outbox${HARNESS_INSTALL_VERSION:+ VERSION '$HARNESS_INSTALL_VERSION'}"
}

harness_psql() { psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "$1"; }

harness_ext_version() { sed -n "s/^default_version = '\(.*\)'$/\1/p" "$H_ROOT/chat_outbox.control"; }
harness_managed_updates() {
	local f v
	for f in "$H_ROOT"/sql/managed/update_*.sql; do
		v=${f##*/update_} && v=${v%.sql}
		# v after $1: the later of the two in version order, and not $1 itself
		if [ "$v" != "$1" ] && [ "$(printf '%s\n' "$1" "$v" | sort -V | tail -n 1)" = "$v" ]; then echo "$v"; fi
	done | sort -V
}
q() { harness_psql "$1"; }

relay_status() { psql -XAtq -v ON_ERROR_STOP=1 "${2:-$PGURL}" -c "SELECT $1 FROM chat_outbox.status WHERE service = 'consumers'"; }
# harness_stop_pid PID: SIGTERM, then wait until the process is gone (a clean stop, not a crash)
harness_stop_pid() {
	kill -TERM "$1"
	harness_wait_for 10 bash -c "! kill -0 $1 2>/dev/null"
}
# relay_unsent_is N: the consumers' outbox holds exactly N rows not sent (for harness_wait_for)
relay_unsent_is() { [ "$(relay_status unsent)" -eq "$1" ]; }
# log_steady <file> <pattern>: logged at least once, and no more on later retries (a state change is logged once,
# not per retry: the house's rule for every retry loop)
log_steady() {
	local first
	first=$(grep -c -E "$2" "$1" || true)
	[ "$first" -ge 1 ] || fail "$1: nothing logged matching $2"
	sleep 1.5 # several retries (the backoffs start at 100 ms)
	expect_eq "$(basename "$1"): '$2' logged once per connection, not per retry" "$first" "$(grep -c -E "$2" "$1" || true)"
}

# Node test peers are ES modules under tests/ and find the npm packages in tests/node_modules
# (scripts/setup.sh installs them) by walking up; CommonJS snippets (`node -e`) need NODE_PATH.
export NODE_PATH=$H_ROOT/tests/node_modules

. "$H_ROOT/tests/harness/assert.sh"
. "$H_ROOT/tests/harness/daemon.sh"
. "$H_ROOT/tests/harness/bullmq.sh"
. "$H_ROOT/tests/harness/relay.sh"
. "$H_ROOT/tests/harness/redis_cluster.sh"
