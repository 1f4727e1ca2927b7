#!/usr/bin/env bash
# scripts/package.sh - the Debian packages, built with Debian's own tooling (dpkg-buildpackage, debhelper,
# pg_buildext; debian/) from this checkout's files as they are, committed or not:
#   build/packages/postgresql-15-chat-outbox_<version>_<arch>.deb   the extension, the managed install's SQL
#   build/packages/chat-outbox_<version>_<arch>.deb                 the daemons, the web client, the units
#   scripts/package.sh [--out DIR] [--no-checks]
#     --out DIR     write the .deb files into DIR instead (emptied first)
#     --no-checks   skip lintian (tests/package/install.sh, which tests the installed packages instead)
# Installs what it needs with apt, as scripts/setup.sh does (needs root or sudo). Every build starts from
# a fresh copy of the checkout in <out>-src/ (build/packages-src/; the build's log and the -dbgsym packages
# stay there), so nothing of an earlier build is reused and the checkout itself gets no build files. DEB_BUILD_OPTIONS passes through; its default here is
# parallel=<cores> (add noopt for an unoptimized build). The version is debian/changelog's.
# Then lintian on both packages: an error fails the script; the warnings that stay are listed with their
# reason in docs/deploy.md. (systemd-analyze verify needs the units' programs installed: package.install
# runs it on the installed units.)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

OUT=$ROOT/build/packages
CHECKS=1
while [ $# -gt 0 ]; do
	case $1 in
	--out) OUT=$(realpath -m "$2"); shift 2 ;;
	--no-checks) CHECKS=0; shift ;;
	*) echo "usage: $0 [--out DIR] [--no-checks]" >&2; exit 2 ;;
	esac
done

PKGS=(
	build-essential dpkg-dev debhelper fakeroot postgresql-server-dev-all systemd
	cmake pkg-config libhiredis-dev libuv1-dev libwebsockets-dev libpq-dev libssl-dev nlohmann-json3-dev
)
[ "$CHECKS" = 0 ] || PKGS+=(lintian)
scripts/install_missing.sh package "${PKGS[@]}"

# The web client's socket.io-client build comes from web/node_modules (pinned by its lock file); the
# package build itself never runs npm.
if [ ! -d web/node_modules ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
	(cd web && npm ci --no-audit --no-fund --loglevel=error)
fi

version=$(dpkg-parsechangelog -S Version)
work=$OUT-src
src=$work/chat-outbox-$version
rm -rf "$work"
mkdir -p "$src"
# The checkout's files as they are (tracked and new ones, not ignored ones; a deleted file is skipped),
# and the one file of web/node_modules the web client ships.
{ git ls-files -z --cached --others --exclude-standard; printf '%s\0' web/node_modules/socket.io-client/dist/socket.io.min.js; } |
	tar -c --null --files-from=- --ignore-failed-read 2>/dev/null | tar -x -C "$src"

export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=$(nproc)}
(cd "$src" && dpkg-buildpackage -b -uc -us --no-sign) >"$work/build.log" 2>&1 ||
	{ tail -n 60 "$work/build.log" >&2; echo "package: dpkg-buildpackage failed; the whole log is $work/build.log" >&2; exit 1; }

rm -rf "$OUT"
mkdir -p "$OUT"
find "$work" -maxdepth 1 -name '*.deb' ! -name '*-dbgsym_*' -exec mv -t "$OUT" {} +
ls "$OUT"/*.deb

if [ "$CHECKS" = 1 ]; then
	# lintian's exit status counts errors only (--fail-on error); its warnings are printed.
	lintian --fail-on error --tag-display-limit 0 "$OUT"/*.deb
	echo "package: lintian found no error"
fi
