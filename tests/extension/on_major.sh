#!/usr/bin/env bash
# extension.pg<major>: the extension built from this tree against PostgreSQL <major>'s headers and
# installed into that major's server, inside a root of the Debian release that ships it
# (scripts/container.sh: 17 trixie, 18 sid), warning-free; then, run there against that server as they
# run on 15: pg_regress and the isolation specs (tests/regress/run.sh), and the delivery suites that prove
# the relay end to end (extension.relay_e2e: a real bullmq Worker; extension.rotation_faults: generation
# switches under a stream with the relay SIGKILLed; extension.schedules: the seeded random schedules).
#   tests/extension/on_major.sh <major>
# The root is entered with chroot, its /proc and /dev bound from the host for the run and unbound after,
# and the npm peers (tests/node_modules: plain JavaScript) bound read-only (tests/harness/root.sh).
. "$(dirname "$0")/../harness/lib.sh"
. "$H_ROOT/tests/harness/root.sh"
MAJOR=${1:?usage: on_major.sh <major>}
harness_init "extension-pg$MAJOR"
ROOT=$("$H_ROOT/scripts/container.sh" "$MAJOR")

# the tree's tracked files, as a fresh clone has them; the build makes the rest (SQL, Lua headers)
root_copy_tree "$ROOT"
PG_CONFIG=/usr/lib/postgresql/$MAJOR/bin/pg_config
chroot "$ROOT" /bin/sh -c "cd /src && make -j2 PG_CONFIG=$PG_CONFIG && make install PG_CONFIG=$PG_CONFIG" \
	>"$H_DIR/build.log" 2>&1 || { tail -n 30 "$H_DIR/build.log" >&2; fail "the build for PostgreSQL $MAJOR failed"; }
warnings=$(grep -c 'warning:' "$H_DIR/build.log" || true)
expect_eq "compiler warnings against PostgreSQL $MAJOR's headers" 0 "$warnings"

root_mount "$ROOT"
root_run "$ROOT" "$MAJOR" installed_files.log extension/installed_files.sh
root_run "$ROOT" "$MAJOR" regress.log regress/run.sh
grep -E '^(ok|not ok|# All)' "$H_DIR/regress.log"
for suite in relay_e2e rotation_faults schedules; do
	root_run "$ROOT" "$MAJOR" "$suite.log" "extension/$suite.sh"
	echo "ok   extension.$suite on PostgreSQL $MAJOR"
done
echo "PASS"
