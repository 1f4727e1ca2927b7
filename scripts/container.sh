#!/usr/bin/env bash
# scripts/container.sh - a root filesystem of a Debian release, made by mmdebstrap from the Debian archive,
# cached; prints its path. Two forms:
#   scripts/container.sh <major>                     the root that tests the extension on PostgreSQL <major>
#       (17: trixie, Debian 13; 18: sid): that release's server, headers and client, a C++ toolchain,
#       hiredis, OpenSSL, python3, redis-server and Node.js (the suites' npm peers). The extension is built
#       and tested for that major inside it (tests/extension/on_major.sh), and the packages of its release
#       are installed into a throwaway overlay of it (tests/package/on_release.sh).
#   scripts/container.sh <release> <name> <package>...   the root <release>-<name> with those packages
#       (scripts/package.sh: <release>-build, the packages' build root with the list it owns)
# The release's packages cannot go on a Debian 12 host (a newer libc), so they live in a folder of their own.
#
# Rules: the roots are cached in $CHAT_OUTBOX_CONTAINERS (default /var/cache/chat-outbox/containers),
# never in the checkout, one folder per root; a root is made again when its package list (recorded beside
# it in <root>.pkgs) changes, and made from nothing on a new machine. A test root is about 1.8-1.9 GB, a
# build root about 1.3 GB (docs/deploy.md, "Containers"); `rm -rf` of the folder deletes them. Needs root
# (mmdebstrap, chroot); installs mmdebstrap on the host if missing.
# sid's Release file is past its Valid-Until in a snapshot archive, so apt is told not to check it (the
# option stays in the root's /etc/apt/apt.conf.d/99mmdebstrap for apt runs inside it).
set -euo pipefail
usage="usage: scripts/container.sh 17|18, or scripts/container.sh <release> <name> <package>..."
if [ $# -eq 1 ]; then
	MAJOR=$1
	case $MAJOR in
	17) RELEASE=trixie ;;
	18) RELEASE=sid ;;
	*) echo "scripts/container.sh: no Debian release here ships PostgreSQL $MAJOR (17: trixie, 18: sid)" >&2; exit 2 ;;
	esac
	NAME=pg$MAJOR
	PKGS=(postgresql-$MAJOR postgresql-server-dev-$MAJOR postgresql-client-$MAJOR g++ make pkg-config
		libhiredis-dev libssl-dev python3 redis-server procps nodejs)
else
	[ $# -ge 3 ] || { echo "$usage" >&2; exit 2; }
	RELEASE=$1 NAME=$2
	shift 2
	PKGS=("$@")
fi
DIR=${CHAT_OUTBOX_CONTAINERS:-/var/cache/chat-outbox/containers}
ROOT=$DIR/$RELEASE-$NAME
MIRROR=${CHAT_OUTBOX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
want=$(printf '%s\n' "$RELEASE" "${PKGS[@]}")

# One maker of a root at a time (a second run waits, then finds it made): the first run's mmdebstrap has
# /proc, /sys and /dev mounted in <root>.new, and a second one's removal of that folder would pull it away.
mkdir -p "$DIR"
exec 9>"$ROOT.lock"
flock 9
if [ -d "$ROOT" ] && [ "$(cat "$ROOT.pkgs" 2>/dev/null)" = "$want" ]; then
	echo "$ROOT"
	exit 0
fi
if ! command -v mmdebstrap >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >&2
fi
# never into a file system mounted below (a killed mmdebstrap may leave its /proc mounted there)
rm -rf --one-file-system "$ROOT" "$ROOT.pkgs" "$ROOT.new"
echo "scripts/container.sh: making $ROOT ($RELEASE: ${PKGS[*]}) from $MIRROR" >&2
mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' --include="$(
	IFS=,
	echo "${PKGS[*]}"
)" "$RELEASE" "$ROOT.new" "$MIRROR" >&2
mv "$ROOT.new" "$ROOT"
echo "$want" >"$ROOT.pkgs"
echo "$ROOT"
