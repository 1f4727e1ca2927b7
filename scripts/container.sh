#!/usr/bin/env bash
# scripts/container.sh <major> - a root filesystem of the Debian release that ships PostgreSQL <major>
# (17: trixie, Debian 13; 18: sid), made by mmdebstrap from the Debian archive with that release's
# server, headers and client, a C++ toolchain, hiredis, OpenSSL, python3, redis-server and Node.js (the
# suites' npm peers); prints its path. The extension is built and tested for that major inside it (tests/extension/on_major.sh): the
# release's packages cannot go on a Debian 12 host (a newer libc), so they live in a folder of their own.
#
# Rules: the roots are cached in $CHAT_OUTBOX_CONTAINERS (default /var/cache/chat-outbox/containers),
# never in the checkout, one folder per major; a root is made again when its package list (PKGS below,
# recorded beside it) changes, and made from nothing on a new machine. About 1.8-1.9 GB each; `rm -rf` of
# the folder deletes them. Needs root (mmdebstrap, chroot); installs mmdebstrap on the host if missing.
# sid's Release file is past its Valid-Until in a snapshot archive, so apt is told not to check it.
set -euo pipefail
MAJOR=${1:?usage: scripts/container.sh 17|18}
case $MAJOR in
17) RELEASE=trixie ;;
18) RELEASE=sid ;;
*) echo "scripts/container.sh: no Debian release here ships PostgreSQL $MAJOR (17: trixie, 18: sid)" >&2; exit 2 ;;
esac
DIR=${CHAT_OUTBOX_CONTAINERS:-/var/cache/chat-outbox/containers}
ROOT=$DIR/$RELEASE-pg$MAJOR
MIRROR=${CHAT_OUTBOX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PKGS=(postgresql-$MAJOR postgresql-server-dev-$MAJOR postgresql-client-$MAJOR g++ make pkg-config
	libhiredis-dev libssl-dev python3 redis-server procps nodejs)
want=$(printf '%s\n' "$RELEASE" "${PKGS[@]}")

if [ -d "$ROOT" ] && [ "$(cat "$ROOT.pkgs" 2>/dev/null)" = "$want" ]; then
	echo "$ROOT"
	exit 0
fi
if ! command -v mmdebstrap >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >&2
fi
mkdir -p "$DIR"
rm -rf "$ROOT" "$ROOT.pkgs" "$ROOT.new"
echo "scripts/container.sh: making $ROOT ($RELEASE, PostgreSQL $MAJOR) from $MIRROR" >&2
mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' --include="$(
	IFS=,
	echo "${PKGS[*]}"
)" "$RELEASE" "$ROOT.new" "$MIRROR" >&2
mv "$ROOT.new" "$ROOT"
echo "$want" >"$ROOT.pkgs"
echo "$ROOT"
