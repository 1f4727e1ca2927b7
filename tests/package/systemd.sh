#!/usr/bin/env bash
# package.systemd: the units under a real systemd, with their sandboxing applied. systemd is not PID 1 on
# the test machine (package.install runs the units' lines by hand), so this boots one as PID 1 of a
# container (systemd-nspawn --boot, Debian's systemd-container) whose root is a throwaway overlay of the
# host's own / (no image to download) with the chat-outbox package installed in it by apt. The container
# shares the host's network, so its units reach this test's Redis and the managed install's PostgreSQL
# on 127.0.0.1. Then, by systemctl inside the container:
#   - chat-outboxd@workers, chat-outboxd@consumers and chat-outbox-relay@chat start with their env files
#     and run sandboxed as the units say (the kernel's view of each main process: user chat-outbox, no
#     capabilities, no_new_privs, a seccomp filter, a mount namespace in which / is read-only);
#   - messages flow both ways (the relay queues them, the daemons write the inboxes);
#   - each is SIGKILLed and systemd's Restart= starts it again, and what was sent meanwhile arrives, once.
# The host's files are never written: the whole test runs in its own mount namespace whose /usr, /etc and
# /var are overlays (where systemd-container is installed when missing; apt may download it), and the
# container's root is another overlay. It tests the chat-outbox package package.install built in the same
# run (build/test-tmp/package-install/debs; CHAT_OUTBOX_DEBS=<folder> names another), or builds one
# (scripts/package.sh, unoptimized, as package.install does) when there is none.
#   tests/package/systemd.sh [trixie]
# With trixie (package.systemd.trixie), the same on Debian 13: the container's root is a throwaway overlay of
# the cached trixie root (scripts/container.sh 17) instead of the host's /, the package is trixie's
# (package.trixie's, build/test-tmp/package-trixie/debs, or a build of its own), and apt in the container
# fetches what it depends on, systemd included, from trixie's archive (the root has no systemd of its own).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
RELEASE=${1:-bookworm}
case $RELEASE in
bookworm) harness_init package-systemd; built_by=package-install ;;
trixie) harness_init package-systemd-trixie; built_by=package-trixie ;;
*) fail "package.systemd runs on bookworm (the host's /) or trixie, not $RELEASE" ;;
esac

# The packages package.install (package.trixie) built in this run (CTest runs it first: the fixture
# "packages", "packages_trixie"), else a build of its own.
DEBS=${CHAT_OUTBOX_DEBS:-${H_TMP:-$H_ROOT/build/test-tmp}/$built_by/debs}
if compgen -G "$DEBS/chat-outbox_*.deb" >/dev/null; then
	DEB=$(ls "$DEBS"/chat-outbox_*.deb)
	echo "ok   testing $DEB"
else
	package_build "$H_DIR/debs" "$RELEASE"
	DEB=$(ls "$H_DIR"/debs/chat-outbox_*.deb)
fi

# --- the host side of the namespace: /usr, /etc, /var overlays; systemd-nspawn in them if missing
package_overlays
if ! command -v systemd-nspawn >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends systemd-container >"$H_DIR/apt-host.log" 2>&1 ||
		{ tail -n 20 "$H_DIR/apt-host.log" >&2; fail "apt-get install systemd-container"; }
fi

# --- the servers, on the host: Redis and a managed install (no extension: the container gets only the
# chat-outbox package, the relay and the daemons)
harness_redis_start
HARNESS_PG_MANAGED=1 harness_pg_start

# --- the container's root: the host's / (as it was before this namespace's overlays), or the cached trixie
# root, under an overlay
LOWER=/
[ "$RELEASE" = bookworm ] || LOWER=$("$H_ROOT/scripts/container.sh" 17)
ROOT=$H_DIR/root
mkdir -p "$ROOT" "$H_DIR/rootov/upper" "$H_DIR/rootov/work"
mount -t overlay rootov -o "lowerdir=$LOWER,upperdir=$H_DIR/rootov/upper,workdir=$H_DIR/rootov/work" "$ROOT"
# The host's own services (its PostgreSQL, Redis, ...) stay off: the container boots to basic.target and
# only the units started below run.
# systemd-nspawn --keep-unit makes the cgroup it runs in the container's: it puts the container in payload/ and
# itself in supervisor/ below it. With no systemd on the host that would be the root of the hierarchies, shared
# by everything; so each run gets a cgroup of its own (in the unified and the named systemd hierarchy), removed
# at the end, and empty ones left by runs that died are removed first.
CGROUPS=()
for h in $(findmnt -rn -t cgroup2 -o TARGET) $(findmnt -rn -t cgroup -o TARGET,OPTIONS | awk '$2 ~ /name=systemd/ { print $1 }'); do
	for stale in "$h"/chat-outbox-package-systemd-*; do
		[ -d "$stale" ] && ! kill -0 "${stale##*-}" 2>/dev/null || continue
		find "$stale" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	mkdir "$h/chat-outbox-package-systemd-$$"
	CGROUPS+=("$h/chat-outbox-package-systemd-$$")
done
# nspawn <args...>: systemd-nspawn in this run's cgroup
nspawn() {
	local cg
	for cg in "${CGROUPS[@]}"; do echo "$BASHPID" >"$cg/cgroup.procs"; done
	exec systemd-nspawn -q -D "$ROOT" --register=no --keep-unit --resolv-conf=off --timezone=off "$@"
}

# a machine id of its own (the host's would make its journal and the host's one)
rm -f "$ROOT/etc/machine-id"
systemd-machine-id-setup --root="$ROOT" >/dev/null
# bookworm: apt in the container sees no repository (every dependency is the host's already); trixie: its
# archive, and systemd to boot. nspawn gives the container an empty /tmp, so the package goes to /root
cp "$DEB" "$ROOT/root/"
if [ "$RELEASE" = bookworm ]; then
	mkdir -p "$ROOT/root/apt/lists/partial" "$ROOT/root/apt/sources.list.d"
	: >"$ROOT/root/apt/sources.list"
	(nspawn env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		-o Dir::Etc::SourceList=/root/apt/sources.list -o Dir::Etc::SourceParts=/root/apt/sources.list.d \
		-o Dir::State::Lists=/root/apt/lists "/root/$(basename "$DEB")") >"$H_DIR/apt-container.log" 2>&1 ||
		{ tail -n 30 "$H_DIR/apt-container.log" >&2; fail "apt-get install chat-outbox in the container"; }
else
	cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
	(nspawn sh -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		systemd '/root/$(basename "$DEB")'") >"$H_DIR/apt-container.log" 2>&1 ||
		{ tail -n 30 "$H_DIR/apt-container.log" >&2; fail "apt-get install chat-outbox systemd in the $RELEASE container"; }
fi

# set_env <file> <VAR> <value>, in the container's /etc/chat-outbox
set_env() {
	local f=$ROOT/etc/chat-outbox/$1
	grep -E "^#?$2=" "$f" >/dev/null || fail "$1 has no $2"
	sed -i -E "s|^#?$2=.*|$2=$3|" "$f"
}
declare -A PORT
for service in workers consumers; do
	PORT[$service]=$(harness_free_port)
	set_env "$service.env" CHAT_OUTBOXD_LISTEN "127.0.0.1:${PORT[$service]}"
	set_env "$service.env" CHAT_OUTBOXD_REDIS_URL "$REDIS_URL"
	set_env "$service.env" CHAT_OUTBOXD_DATABASE_URL "$PGURL"
	set_env "$service.env" CHAT_OUTBOXD_JWT_SECRET chat-outbox-tests-jwt-secret-0123456789abcdef
done
set_env relay-chat.env CHAT_OUTBOX_RELAY_DATABASE_URL "$PGURL"
set_env relay-chat.env CHAT_OUTBOX_RELAY_REDIS_URL "$REDIS_URL"

# --- boot
(nspawn --boot --link-journal=no --console=pipe systemd.unit=basic.target) >"$H_DIR/boot.log" 2>&1 </dev/null &
NSPAWN_PID=$!
harness_track "$NSPAWN_PID"
container_init() { ps -o pid= --ppid "$NSPAWN_PID" | tr -d ' '; }
harness_wait_for 30 container_init
INIT=$(container_init)
# in_container <command...>: run it in the container's namespaces (systemctl talks to its systemd)
in_container() { nsenter -t "$INIT" -m -u -i -p -- "$@"; }
booted() { in_container systemctl is-system-running | grep -E '^(running|degraded)$'; }
harness_wait_for 60 booted || fail "the container's systemd did not finish booting: $(in_container systemctl is-system-running)"
expect_eq "the container's PID 1" systemd "$(in_container cat /proc/1/comm)"

UNITS=(chat-outboxd@workers chat-outboxd@consumers chat-outbox-relay@chat)
in_container systemctl start "${UNITS[@]}" || { in_container journalctl --no-pager -n 50 >&2; fail "systemctl start"; }
main_pid() { in_container systemctl show -p MainPID --value "$1"; }
for unit in "${UNITS[@]}"; do
	harness_wait_value 20 = active in_container systemctl is-active "$unit"
done
echo "ok   ${UNITS[*]} active under systemd as PID 1"

# --- the sandbox, as the kernel shows each main process
for unit in "${UNITS[@]}"; do
	pid=$(main_pid "$unit")
	status=$(in_container cat "/proc/$pid/status")
	expect_eq "$unit runs as" chat-outbox "$(in_container ps -o user= -p "$pid")"
	expect_eq "$unit CapEff" 0000000000000000 "$(awk '$1 == "CapEff:" { print $2 }' <<<"$status")"
	expect_eq "$unit CapBnd" 0000000000000000 "$(awk '$1 == "CapBnd:" { print $2 }' <<<"$status")"
	expect_eq "$unit NoNewPrivs" 1 "$(awk '$1 == "NoNewPrivs:" { print $2 }' <<<"$status")"
	expect_eq "$unit Seccomp (2: a filter)" 2 "$(awk '$1 == "Seccomp:" { print $2 }' <<<"$status")"
	# ProtectSystem=strict: / is read-only in its mount namespace; PrivateTmp: its own /tmp
	expect_eq "$unit / mount" ro "$(in_container nsenter -t "$pid" -m findmnt -n -o OPTIONS / | tr ',' '\n' | grep -x -m1 -E 'ro|rw')"
	[ "$(in_container readlink "/proc/$pid/ns/mnt")" != "$(in_container readlink /proc/1/ns/mnt)" ] || fail "$unit shares PID 1's mount namespace"
done
echo "ok   sandboxed: user chat-outbox, no capabilities, no_new_privs, seccomp, / read-only in a mount namespace of its own"

# --- messages both ways, through the relay unit and the daemon units
. "$H_ROOT/tests/package/both_ways.sh"
send 50 first
both_ways "under systemd"

# --- kill -9 each: Restart=on-failure starts it again (RestartSec=2s); what was sent meanwhile arrives
for unit in "${UNITS[@]}"; do
	before=$(main_pid "$unit")
	in_container kill -9 "$before"
	send 20 "while $unit restarts"
	restarted() { local now; now=$(main_pid "$unit"); [ "$now" != 0 ] && [ "$now" != "$before" ] && [ "$(in_container systemctl is-active "$unit")" = active ]; }
	harness_wait_for 30 restarted || fail "$unit was not restarted: $(in_container systemctl status --no-pager "$unit")"
	expect_eq "$unit restarts" 1 "$(in_container systemctl show -p NRestarts --value "$unit")"
	both_ways "$unit SIGKILLed and restarted by systemd"
done

in_container systemctl stop "${UNITS[@]}"
for unit in "${UNITS[@]}"; do
	expect_eq "$unit after stop" inactive "$(in_container systemctl is-active "$unit" || true)"
done
echo "ok   stopped by systemctl stop"
in_container systemctl poweroff || true
harness_wait_for 30 bash -c "! kill -0 $NSPAWN_PID 2>/dev/null"
for cg in "${CGROUPS[@]}"; do find "$cg" -depth -type d -exec rmdir {} +; done
echo "ok   the container powered off, its cgroups removed"
echo PASS
