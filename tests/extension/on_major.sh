#!/usr/bin/env bash
# extension.pg<major>.regress: the extension built from this tree against PostgreSQL <major>'s headers and
# installed into that major's server, inside a root of the Debian release that ships it
# (scripts/container.sh: 17 trixie, 18 sid), warning-free; then pg_regress and the isolation specs
# (tests/regress/run.sh) run there against that server, as extension.regress does on 15.
#   tests/extension/on_major.sh <major>
# The root is entered with chroot, its /proc and /dev bound from the host for the run and unbound after.
. "$(dirname "$0")/../harness/lib.sh"
MAJOR=${1:?usage: on_major.sh <major>}
harness_init "extension-pg$MAJOR"
ROOT=$("$H_ROOT/scripts/container.sh" "$MAJOR")

# the tree's tracked files, as a fresh clone has them; the build makes the rest (SQL, Lua headers)
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
chroot "$ROOT" /usr/bin/env PG_MAJOR="$MAJOR" PG_BIN="/usr/lib/postgresql/$MAJOR/bin" H_TMP=/tmp/chat_outbox-tests \
	PATH="/usr/lib/postgresql/$MAJOR/bin:/usr/sbin:/usr/bin:/sbin:/bin" /bin/bash /src/tests/regress/run.sh \
	>"$H_DIR/regress.log" 2>&1 || { tail -n 60 "$H_DIR/regress.log" >&2; fail "pg_regress or the isolation specs failed on PostgreSQL $MAJOR"; }
grep -E '^(ok|not ok|# All)' "$H_DIR/regress.log"
echo "PASS"
