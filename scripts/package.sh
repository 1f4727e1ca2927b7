#!/usr/bin/env bash
# scripts/package.sh - the Debian packages of one Debian release, built with Debian's own tooling
# (dpkg-buildpackage, debhelper, pg_buildext; debian/) from this checkout's files as they are, committed or not:
#   build/packages/<release>/postgresql-<major>-chat-outbox_<version>_<arch>.deb   the extension, the managed SQL
#   build/packages/<release>/chat-outbox_<version>_<arch>.deb                      the daemons, the web client, the units
#   scripts/package.sh [--release bookworm|trixie|sid] [--out DIR] [--no-checks]
#     --release R   the Debian release the packages are for (default bookworm, Debian 12, this machine's):
#                   bookworm builds here, trixie (Debian 13) and sid in a root of that release
#                   (scripts/container.sh <release> build, cached), since their packages need its libc.
#                   <major> is the PostgreSQL the release ships (bookworm 15, trixie 17, sid 18):
#                   pg_buildext builds for the versions of debian/pgversions the release supports.
#     --out DIR     write the .deb files into DIR instead (emptied first)
#     --no-checks   skip lintian (tests/package/install.sh, which tests the installed packages instead)
# Installs what it needs with apt, as scripts/setup.sh does (needs root or sudo; a container build needs root).
# Every build starts from a fresh copy of the checkout (bookworm: <out>-src/, where the build's log and the
# -dbgsym packages stay; in a root: a folder of its own in the root's /build, removed after the build, its log
# kept as <out>-src/build.log), so nothing of an earlier build is reused and the checkout itself gets no build
# files. debian/control is made for the release from debian/control.in and debian/pgversions (`pg_buildext
# updatecontrol`) in that copy: the committed debian/control is bookworm's. DEB_* variables pass through
# (DEB_BUILD_OPTIONS, DEB_CFLAGS_APPEND, ...); DEB_BUILD_OPTIONS' default here is parallel=<cores> (add noopt
# for an unoptimized build). The version is debian/changelog's.
# Then lintian, of the release the packages are for, on both packages: an error fails the script; the
# warnings that stay are listed with their reason in docs/deploy.md. (systemd-analyze verify needs the units'
# programs installed: package.install runs it on the installed units.)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

RELEASE=bookworm
OUT=
CHECKS=1
while [ $# -gt 0 ]; do
	case $1 in
	--release) RELEASE=$2; shift 2 ;;
	--out) OUT=$(realpath -m "$2"); shift 2 ;;
	--no-checks) CHECKS=0; shift ;;
	*) echo "usage: $0 [--release bookworm|trixie|sid] [--out DIR] [--no-checks]" >&2; exit 2 ;;
	esac
done
case $RELEASE in
bookworm | trixie | sid) ;;
*) echo "package: no packages for Debian release '$RELEASE' (bookworm, trixie, sid)" >&2; exit 2 ;;
esac
if [ -z "$OUT" ]; then
	OUT=$ROOT/build/packages/$RELEASE
	# .deb files right in build/packages/ are the layout before <release>/ (bookworm's): removed, so that
	# `apt-get install ./build/packages/*.deb` from an old note finds nothing instead of an old build
	rm -f "$ROOT"/build/packages/*.deb
fi

# What the build needs (debian/control's Build-Depends and the tools), here or in the release's root.
PKGS=(
	build-essential dpkg-dev debhelper fakeroot postgresql-server-dev-all systemd
	cmake pkg-config python3 libhiredis-dev libuv1-dev libwebsockets-dev libpq-dev libssl-dev nlohmann-json3-dev
)
if [ "$RELEASE" = bookworm ]; then
	[ "$CHECKS" = 0 ] || PKGS+=(lintian)
	scripts/install_missing.sh package "${PKGS[@]}"
	# in the root: run <command...> as the build would here
	in_root() { (cd "$1" && shift && "$@"); }
	BROOT=
else
	[ "$(id -u)" = 0 ] || exec sudo -E "$0" --release "$RELEASE" ${OUT:+--out "$OUT"} $([ "$CHECKS" = 1 ] || echo --no-checks)
	BROOT=$(scripts/container.sh "$RELEASE" build "${PKGS[@]}" lintian)
	DEBVARS=()
	for v in $(compgen -e | grep '^DEB_' || true); do DEBVARS+=("$v=${!v}"); done
	# in_root <dir inside the root> <command...>: the command in that folder of the root, with a clean environment
	in_root() {
		local dir=$1
		shift
		chroot "$BROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "${DEBVARS[@]}" \
			/bin/sh -c 'cd "$0" && exec "$@"' "$dir" "$@"
	}
fi

# The web client's socket.io-client build comes from web/node_modules (pinned by its lock file); the
# package build itself never runs npm.
if [ ! -d web/node_modules ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
	(cd web && npm ci --no-audit --no-fund --loglevel=error)
fi

version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
if [ -z "$BROOT" ]; then
	work=$OUT-src inwork=$work
	rm -rf "$work"
	mkdir -p "$work"
else
	mkdir -p "$BROOT/build"
	work=$(mktemp -d "$BROOT/build/chat-outbox-XXXXXX") inwork=/build/${work##*/}
	trap 'rm -rf "$work"' EXIT
fi
src=$work/chat-outbox-$version
mkdir -p "$src"
# The checkout's files as they are (tracked and new ones, not ignored ones; a deleted file is skipped),
# and the one file of web/node_modules the web client ships (a node_modules that is a symbolic link, as in a
# worktree that shares another checkout's, is not ignored by git's node_modules/ rule: left out here).
{ git ls-files -z --cached --others --exclude-standard | grep -zvE '(^|/)node_modules$'; printf '%s\0' web/node_modules/socket.io-client/dist/socket.io.min.js; } |
	tar -c --null --files-from=- --ignore-failed-read 2>/dev/null | tar -x -C "$src"

export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=$(nproc)}
[ -z "$BROOT" ] || DEBVARS+=("DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS")
log=$work/build.log
{ in_root "$inwork/chat-outbox-$version" pg_buildext updatecontrol &&
	in_root "$inwork/chat-outbox-$version" dpkg-buildpackage -b -uc -us --no-sign; } >"$log" 2>&1 || {
	tail -n 60 "$log" >&2
	[ -z "$BROOT" ] || { mkdir -p "$OUT-src" && cp "$log" "$OUT-src/build.log" && log=$OUT-src/build.log; }
	echo "package: dpkg-buildpackage failed; the whole log is $log" >&2
	exit 1
}

rm -rf "$OUT"
mkdir -p "$OUT"
debs=$(cd "$work" && find . -maxdepth 1 -name '*.deb' ! -name '*-dbgsym_*' -printf '%f\n' | sort)
if [ "$CHECKS" = 1 ]; then
	# lintian's exit status counts errors only (--fail-on error); its warnings are printed.
	# shellcheck disable=SC2086 # the file names have no spaces
	in_root "$inwork" lintian --fail-on error --tag-display-limit 0 $debs
	echo "package: lintian ($RELEASE) found no error"
fi
(cd "$work" && mv -t "$OUT" $debs)
[ -z "$BROOT" ] || { mkdir -p "$OUT-src" && cp "$log" "$OUT-src/build.log"; }
ls "$OUT"/*.deb
