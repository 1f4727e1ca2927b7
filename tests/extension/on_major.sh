#!/usr/bin/env bash
# extension.pg<major>: the extension built from this tree against PostgreSQL <major>'s headers and
# installed into that major's server, inside a root of the Debian release that ships it
# (scripts/container.sh: 17 trixie, 18 sid), warning-free; then, run there against that server as they
# run on 15: pg_regress and the isolation specs (tests/regress/run.sh), and the delivery suites that prove
# the relay end to end (extension.relay_e2e: a real bullmq Worker; extension.rotation_faults: generation
# switches under a stream with the relay SIGKILLed; extension.schedules: the seeded random schedules).
#   tests/extension/on_major.sh <major>
# The root is entered with chroot, its /proc and /dev bound from the host for the run and unbound after,
# and the npm peers (tests/node_modules: plain JavaScript) bound read-only.
. "$(dirname "$0")/../harness/lib.sh"
MAJOR=${1:?usage: on_major.sh <major>}
harness_init "extension-pg$MAJOR"
ROOT=$("$H_ROOT/scripts/container.sh" "$MAJOR")

# the tree's tracked files, as a fresh clone has them; the build makes the rest (SQL, Lua headers). A
# bind mount a killed run left is undone first: rm must never reach the host's files through it.
for m in "$ROOT/src/tests/node_modules" "$ROOT/dev/pts" "$ROOT/dev/shm" "$ROOT/dev" "$ROOT/proc"; do
	if mountpoint -q "$m"; then umount "$m"; fi
done
rm -rf "$ROOT/src"
mkdir "$ROOT/src"
(cd "$H_ROOT" && git ls-files -z | tar --null -T - -c) | tar -x -C "$ROOT/src"
PG_CONFIG=/usr/lib/postgresql/$MAJOR/bin/pg_config
chroot "$ROOT" /bin/sh -c "cd /src && make -j2 PG_CONFIG=$PG_CONFIG && make install PG_CONFIG=$PG_CONFIG" \
	>"$H_DIR/build.log" 2>&1 || { tail -n 30 "$H_DIR/build.log" >&2; fail "the build for PostgreSQL $MAJOR failed"; }
warnings=$(grep -c 'warning:' "$H_DIR/build.log" || true)
expect_eq "compiler warnings against PostgreSQL $MAJOR's headers" 0 "$warnings"

mounted=()
unmount() { local i; for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[$i]}" || true; done; }
trap 'rc=$?; unmount; (exit $rc); harness_cleanup' EXIT # the harness's own cleanup after
for m in proc dev dev/shm dev/pts; do
	mountpoint -q "$ROOT/$m" || { mount --bind "/$m" "$ROOT/$m" && mounted+=("$ROOT/$m"); }
done
mkdir -p "$ROOT/src/tests/node_modules"
mount --bind "$H_ROOT/tests/node_modules" "$ROOT/src/tests/node_modules"
mounted+=("$ROOT/src/tests/node_modules")
mount -o remount,bind,ro "$ROOT/src/tests/node_modules"

inside() { # inside <log> <script> [args]: a suite of the tree, run in the root against its server
	local log=$1
	shift
	chroot "$ROOT" /usr/bin/env PG_MAJOR="$MAJOR" PG_BIN="/usr/lib/postgresql/$MAJOR/bin" HARNESS_EXTENSION_MAJOR="$MAJOR" \
		H_TMP=/tmp/chat_outbox-tests PATH="/usr/lib/postgresql/$MAJOR/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		/bin/bash "/src/tests/$1" "${@:2}" >"$H_DIR/$log" 2>&1 ||
		{ tail -n 60 "$H_DIR/$log" >&2; fail "$1 failed on PostgreSQL $MAJOR"; }
}
inside regress.log regress/run.sh
grep -E '^(ok|not ok|# All)' "$H_DIR/regress.log"
for suite in relay_e2e rotation_faults schedules; do
	inside "$suite.log" "extension/$suite.sh"
	echo "ok   extension.$suite on PostgreSQL $MAJOR"
done
echo "PASS"
