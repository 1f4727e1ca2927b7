#!/usr/bin/env bash
# package.install: the Debian packages as a user installs and runs them. scripts/package.sh builds them, then
# `apt-get install ./*.deb` installs them, and everything after runs the installed files only: CREATE EXTENSION
# from postgresql-15-chat-outbox, chat-outboxd for both services from /usr/bin, started by the installed units'
# own ExecStartPre= and ExecStart= lines with /etc/chat-outbox/<service>.env as user chat-outbox (systemd is
# not PID 1 here, so the test runs those lines as the unit would), the web client from /usr/share/chat-outbox.
# Messages go both ways; a daemon killed with SIGKILL and started again by its ExecStart= line gets what was
# sent meanwhile; the managed install's SQL from the package in a second database, relayed by
# chat-outbox-relay@chat (its unit's lines, relay-chat.env) to a real bullmq Worker, every message once and
# in order through a kill -9 and a start by ExecStart=; a unit without its env file fails at once naming the
# file; a reinstall of the same version while the daemons run keeps the edited env files and messages
# flowing; `apt-get remove` leaves only the env files (and the cluster's data), `apt-get purge` removes
# those too. package.systemd then runs the units under a real systemd, from the packages built here.
#
# The host's /usr, /etc and /var are shared with every other suite (the system's PostgreSQL 15 loads the
# extension that `make install` put there): apt and dpkg must never write to them. So the whole test runs in
# its own mount namespace (unshare --mount) where /usr, /etc and /var are overlayfs mounts over the host's
# trees with their upper layers in the test's scratch folder: every write lands there and disappears with the
# namespace (tests/package/lib.sh). It checks that the three are overlays before apt runs. The network
# namespace is shared (ports from harness_free_port). apt sees no repository: every dependency is installed
# already (setup.sh), and a missing one fails instead of being fetched.
# The packages are built unoptimized (DEB_BUILD_OPTIONS noopt, no debug info, no -dbgsym) to halve the
# build's time: this suite tests the packaging; the other suites test the optimized programs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
harness_init package-install

# --- build (before the overlay), into the scratch folder: build/packages/bookworm/ keeps the optimized packages a user
# built with scripts/package.sh.
package_build "$H_DIR/debs"
debs=("$H_DIR"/debs/*.deb)
expect_eq "packages built" 2 "${#debs[@]}"

# --- the overlay
package_overlays

# `make install` put the extension's files here (setup.sh); they go (in the overlay) so that only the
# package can provide them.
PG_LIB=$("$PG_BIN/pg_config" --pkglibdir) PG_EXT=$("$PG_BIN/pg_config" --sharedir)/extension
rm -f "$PG_LIB"/chat_outbox.so "$PG_EXT"/chat_outbox.control "$PG_EXT"/chat_outbox--*.sql

# apt sees no repository (no sources, an empty lists folder): a dependency that is not installed already
# fails the install instead of being fetched.
mkdir -p "$H_DIR/apt/lists/partial" "$H_DIR/apt/sources.list.d"
: >"$H_DIR/apt/sources.list"
apt_get() {
	DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends -o Dir::Etc::SourceList="$H_DIR/apt/sources.list" \
		-o Dir::Etc::SourceParts="$H_DIR/apt/sources.list.d" -o Dir::State::Lists="$H_DIR/apt/lists" \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@" >>"$H_DIR/apt.log" 2>&1 ||
		{ tail -n 30 "$H_DIR/apt.log" >&2; fail "apt-get $*"; }
}
apt_get install "${debs[@]}"
for p in chat-outbox postgresql-15-chat-outbox; do
	expect_eq "$p installed" "install ok installed" "$(dpkg-query -W -f='${Status}' "$p")"
	dpkg -L "$p" >"$H_DIR/$p.files"
done
id chat-outbox >/dev/null || fail "no chat-outbox user"
for f in /etc/chat-outbox/workers.env /etc/chat-outbox/consumers.env /etc/chat-outbox/relay-chat.env; do
	expect_eq "$f owner and mode" "root:chat-outbox 640" "$(stat -c '%U:%G %a' "$f")"
done
systemd-analyze verify /lib/systemd/system/chat-outboxd@.service /lib/systemd/system/chat-outbox-relay@.service \
	>"$H_DIR/verify.log" 2>&1 || { cat "$H_DIR/verify.log" >&2; fail "systemd-analyze verify"; }
[ ! -s "$H_DIR/verify.log" ] || { cat "$H_DIR/verify.log" >&2; fail "systemd-analyze verify printed warnings"; }
echo "ok   installed: user chat-outbox, env files 0640 root:chat-outbox, units verify clean"

# --- the servers; CREATE EXTENSION (harness_pg_start) loads the packaged library
harness_redis_start
harness_pg_start
expect_eq "extension from the package" "$PG_LIB/chat_outbox.so" \
	"$(grep -x "$PG_LIB/chat_outbox.so" "$H_DIR/postgresql-15-chat-outbox.files")"

# --- the units, run as systemd would: ExecStartPre= then ExecStart= of the installed unit, with the env
# file's variables only, as the unit's User=.
# unit_line <unit file> <key> <instance>: that line's command, %i and $$ resolved (our units use no other
# specifier), as one string in the shell-like quoting systemd reads.
unit_line() { sed -n "s/^$2=//p" "$1" | sed -e "s/%i/$3/g" -e 's/\$\$/$/g'; }
# unit_exec <unit file> <key> <instance> <log>: execs that line as the unit's User=, its environment the
# variables of its EnvironmentFile= (KEY=value lines; our env files quote nothing) and PATH. It replaces
# the shell that runs it (so a background job's pid is the program's): run it in a subshell or with &.
unit_exec() {
	local unit=$1 key=$2 instance=$3 log=$4 user envfile line vars=()
	user=$(sed -n 's/^User=//p' "$unit")
	envfile=$(unit_line "$unit" EnvironmentFile "$instance"); envfile=${envfile#-}
	if [ -f "$envfile" ]; then
		while IFS= read -r line; do
			case $line in '' | '#'*) ;; *=*) vars+=("$line") ;; esac
		done <"$envfile"
	fi
	eval "local argv=($(unit_line "$unit" "$key" "$instance"))"
	exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "${vars[@]}" \
		setpriv --reuid="$user" --regid="$user" --init-groups -- "${argv[@]}" >>"$H_DIR/$log" 2>&1
}
DAEMON_UNIT=/lib/systemd/system/chat-outboxd@.service
RELAY_UNIT=/lib/systemd/system/chat-outbox-relay@.service
# unit_start <unit file> <instance> <log>: ExecStartPre=, then ExecStart= in the background; sets UNIT_PID.
unit_start() {
	(unit_exec "$1" ExecStartPre "$2" "$3") || fail "ExecStartPre of $(basename "$1") instance $2 failed"
	unit_exec "$1" ExecStart "$2" "$3" &
	UNIT_PID=$!
	harness_track "$UNIT_PID"
}
# set_env <file> <VAR> <value>: the admin's edit of the shipped file, the variable's line (commented or
# not) set.
set_env() { grep -E "^#?$2=" "$1" >/dev/null || fail "$1 has no $2"; sed -i -E "s|^#?$2=.*|$2=$3|" "$1"; }

JWT=chat-outbox-tests-jwt-secret-0123456789abcdef
declare -A PORT
for service in workers consumers; do
	PORT[$service]=$(harness_free_port)
	f=/etc/chat-outbox/$service.env
	set_env "$f" CHAT_OUTBOXD_LISTEN "127.0.0.1:${PORT[$service]}"
	set_env "$f" CHAT_OUTBOXD_REDIS_URL "$REDIS_URL"
	set_env "$f" CHAT_OUTBOXD_DATABASE_URL "$PGURL"
	set_env "$f" CHAT_OUTBOXD_JWT_SECRET "$JWT"
	set_env "$f" CHAT_OUTBOXD_LOG_LEVEL verbose
done

# A unit without its env file fails in ExecStartPre=, naming the file.
if (unit_exec "$DAEMON_UNIT" ExecStartPre nosuch nosuch.log); then fail "chat-outboxd@nosuch started without its env file"; fi
grep -F "/etc/chat-outbox/nosuch.env is missing" "$H_DIR/nosuch.log" >/dev/null || fail "no message naming the missing file: $(cat "$H_DIR/nosuch.log")"
echo "ok   chat-outboxd@nosuch fails at once: $(cat "$H_DIR/nosuch.log")"

unit_start "$DAEMON_UNIT" workers workers.log; WORKERS_PID=$UNIT_PID
unit_start "$DAEMON_UNIT" consumers consumers.log; CONSUMERS_PID=$UNIT_PID
daemon_wait_consuming workers.log
daemon_wait_consuming consumers.log
expect_eq "daemon runs as" chat-outbox "$(ps -o user= -p "$WORKERS_PID")"

# The web client from the package's folder, the daemon's default --web-root.
for file in index.html socket.io.min.js; do
	curl -sf "http://127.0.0.1:${PORT[workers]}/$file" -o "$H_DIR/$file" || fail "GET /$file"
	cmp -s "$H_DIR/$file" "/usr/share/chat-outbox/web/$file" || fail "/$file is not /usr/share/chat-outbox/web/$file"
done
echo "ok   web client served from /usr/share/chat-outbox/web"

. "$H_ROOT/tests/package/both_ways.sh"
send 50 first
both_ways "installed daemons"

# kill -9, messages meanwhile, the unit's own ExecStart= again
kill -9 "$WORKERS_PID"
wait "$WORKERS_PID" 2>/dev/null || true
send 50 while-down
unit_start "$DAEMON_UNIT" workers workers.log; WORKERS_PID=$UNIT_PID
both_ways "after kill -9 and the unit's ExecStart="

# --- the managed install's relay, chat-outbox-relay@chat: the packaged SQL installed into a second database
# of the same cluster by its owner, a non-superuser (docs/managed.md), the relay started by its installed
# unit's own lines with the shipped relay-chat.env as user chat-outbox. Its jobs go to Redis database 1, so
# the daemons above (database 0) never take them; a real bullmq Worker (consume.mjs) counts them.
EXT_PGURL=$PGURL
q "CREATE ROLE chat_owner LOGIN" >/dev/null
q "CREATE DATABASE managed OWNER chat_owner" >/dev/null
PGURL="postgresql://chat_owner@127.0.0.1:$PG_PORT/managed"
psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -f /usr/share/chat-outbox/sql/chat_outbox_managed.sql >"$H_DIR/managed-install.log" 2>&1 ||
	{ cat "$H_DIR/managed-install.log" >&2; fail "the packaged chat_outbox_managed.sql"; }
RELAY_REDIS_URL=$REDIS_URL/1
set_env /etc/chat-outbox/relay-chat.env CHAT_OUTBOX_RELAY_DATABASE_URL "$PGURL"
set_env /etc/chat-outbox/relay-chat.env CHAT_OUTBOX_RELAY_REDIS_URL "$RELAY_REDIS_URL"
PROCESSED=$H_DIR/processed.txt
: >"$PROCESSED"
. "$H_ROOT/tests/extension/delivery.sh"
(cd "$H_ROOT/tests" && REDIS_URL=$RELAY_REDIS_URL exec node extension/consume.mjs "$PROCESSED" >"$H_DIR/consumer.log" 2>&1) &
harness_track $!
harness_wait_for 20 grep -q ready "$H_DIR/consumer.log"
unit_start "$RELAY_UNIT" chat relay-chat.log; RELAY_PID=$UNIT_PID
harness_wait_value 20 = running relay_status relay_state
expect_eq "relay runs as" chat-outbox "$(ps -o user= -p "$RELAY_PID")"
expect_eq "status: the relay's pid" "$RELAY_PID" "$(relay_status worker_pid)"
sender_start relay 5
harness_wait_for 20 sender_acked_at_least 50
harness_wait_value 20 -ge 50 distinct_processed
echo "ok   chat-outbox-relay@chat relays the managed database's messages to the Worker"
kill -9 "$RELAY_PID"
wait "$RELAY_PID" 2>/dev/null || true
at=$(sender_acked)
harness_wait_for 20 sender_acked_at_least $((at + 50)) # sends go on with no relay running
unit_start "$RELAY_UNIT" chat relay-chat.log; RELAY_PID=$UNIT_PID
at=$(sender_acked)
harness_wait_for 20 sender_acked_at_least $((at + 20))
sender_stop
verify_delivered "relay killed -9 and started again by its unit's ExecStart="
verify_order "relay killed -9 and started again by its unit's ExecStart="
kill -TERM "$RELAY_PID"
wait "$RELAY_PID" || fail "relay exited $? on SIGTERM"
PGURL=$EXT_PGURL

# Reinstall the same version while both daemons run: the edited env files stay, messages go on.
cp /etc/chat-outbox/workers.env "$H_DIR/workers.env.edited"
apt_get install --reinstall "${debs[@]}"
cmp -s /etc/chat-outbox/workers.env "$H_DIR/workers.env.edited" || fail "the reinstall changed the edited workers.env"
expect_eq "workers.env after the reinstall" "root:chat-outbox 640" "$(stat -c '%U:%G %a' /etc/chat-outbox/workers.env)"
send 50 after-reinstall
both_ways "after a reinstall while running"
# What the postinst's try-restart does under systemd: the running daemons restart onto the reinstalled program.
daemons_stop "$WORKERS_PID" "$CONSUMERS_PID"
unit_start "$DAEMON_UNIT" workers workers.log; WORKERS_PID=$UNIT_PID
unit_start "$DAEMON_UNIT" consumers consumers.log; CONSUMERS_PID=$UNIT_PID
send 50 restarted
both_ways "restarted after the reinstall"

# --- remove (the units stopped first, as the prerm does through systemd), then purge
daemons_stop "$WORKERS_PID" "$CONSUMERS_PID"
harness_pg_ctl -m fast stop >/dev/null
apt_get remove chat-outbox postgresql-15-chat-outbox
conffiles="/etc/chat-outbox/consumers.env /etc/chat-outbox/relay-chat.env /etc/chat-outbox/workers.env"
left=$(cat "$H_DIR"/*.files | sort -u | while read -r path; do
	[ -e "$path" ] && [ ! -d "$path" ] && echo "$path"
done || true)
expect_eq "left after remove" "$conffiles" "$(echo $left)"
expect_eq "chat-outbox after remove" "deinstall ok config-files" "$(dpkg-query -W -f='${Status}' chat-outbox)"
# it has no conffiles, so nothing of it is left
if dpkg-query -W postgresql-15-chat-outbox >/dev/null 2>&1; then fail "postgresql-15-chat-outbox still known to dpkg after remove"; fi
echo "ok   remove: only the env files left (and the cluster's data in $H_DIR)"
apt_get purge chat-outbox
[ ! -e /etc/chat-outbox ] || fail "/etc/chat-outbox left after purge: $(ls -la /etc/chat-outbox)"
for f in $conffiles; do
	if dpkg-statoverride --list "$f" >/dev/null; then fail "statoverride for $f left after purge"; fi
done
echo "ok   purge: nothing left"
echo PASS
