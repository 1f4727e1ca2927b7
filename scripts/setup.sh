#!/usr/bin/env bash
# scripts/setup.sh - install what chat_outbox needs on Debian 12, then build it.
# Idempotent: installs only what is missing. Needs root or sudo for apt and `make install`.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

PKGS=(
	build-essential g++ cmake pkg-config python3 ca-certificates
	postgresql-15 postgresql-server-dev-15 postgresql-client-15 libpq-dev
	redis-server redis-tools redis-sentinel
	valkey-server valkey-tools # the delivery suites run on Valkey 8 too (tests/valkey/); bookworm-backports, below
	patroni etcd-server haproxy
	libhiredis-dev libuv1-dev libwebsockets-dev libwebsockets-evlib-uv nlohmann-json3-dev libssl-dev
	libgtest-dev clang
	clang-format-14 # repo.clang_format: the layout .clang-format describes, as version 14 lays it out
	gnuplot-nox
	iproute2 # ss: the suites find a process's own Redis connections (redis_conns_of in tests/harness/lib.sh)
	postgresql-15-pgq3 # PgQ, the peer outbox in bench/run.sh (variant pgq)
	chromium
	prometheus # promtool and the Prometheus deploy.prometheus runs
	# building the Debian packages and package.install (systemd-sysusers, systemd-analyze)
	debhelper postgresql-server-dev-all systemd
	systemd-container # package.systemd boots a systemd as a container's PID 1 (systemd-nspawn)
)
# Valkey 8 is in Debian 12 only in bookworm-backports: add that source when no apt source names it
# (apt never prefers a backports package over the release's, so only what the release lacks comes from it).
. /etc/os-release
if [ "${VERSION_CODENAME:-}" = bookworm ] &&
	! grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "deb http://deb.debian.org/debian bookworm-backports main" | $SUDO tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
	$SUDO apt-get update -qq
fi
valkey_before=$(dpkg-query -W -f='${Status}' valkey-server 2>/dev/null || true)
scripts/install_missing.sh setup "${PKGS[@]}"
# The suites start their own servers on their own ports: the valkey-server package's own service would
# hold port 6379 (the demo's and Debian's redis-server's) for nothing, so the one this run installed is
# stopped and not started at boot.
if [ "$valkey_before" != "install ok installed" ] && [ -d /run/systemd/system ]; then
	$SUDO systemctl disable --now valkey-server.service >/dev/null 2>&1 || true
fi

# Debian's postgresql-15 package may start a "main" cluster; we never use it, our tests and the
# demo start their own clusters under the project folder.

# npm test peers (real bullmq, socket.io-client, pg, ws; puppeteer-core drives chromium), pinned by tests/package-lock.json.
if [ ! -d tests/node_modules ] || [ tests/package-lock.json -nt tests/node_modules/.package-lock.json ]; then
	(cd tests && npm ci --no-audit --no-fund --loglevel=error)
fi

# The web client's one library (socket.io-client's browser build), pinned by web/package-lock.json.
# The CMake build runs the same `npm ci` when the lock file changes; web.chat drives Debian's chromium.
if [ ! -d web/node_modules ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
	(cd web && npm ci --no-audit --no-fund --loglevel=error)
fi

# Build: the extension with PGXS, the daemon and tests with CMake.
make -s -j2
$SUDO make -s install
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2
