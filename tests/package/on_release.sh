#!/usr/bin/env bash
# package.<release> (trixie: Debian 13 with PostgreSQL 17; sid: PostgreSQL 18): the packages of that release,
# built by `scripts/package.sh --release <release>` (in a root of the release), installed with apt as a user
# of that release installs them, into a clean root of it: a throwaway overlay of the cached root
# scripts/container.sh <major> makes (that release's PostgreSQL server, Redis, Node.js), never the build
# root. apt fetches what the packages depend on from the release's archive (so a dependency the release
# does not have fails the install). Then, in that root (chroot) against its server, only the installed
# files: the chat_outbox files in the server's folders are exactly what this tree's build installs and all
# belong to postgresql-<major>-chat-outbox (extension.installed_files, dpkg -S), the daemons run on the
# release's libraries, and extension.relay_e2e: CREATE EXTENSION (the packaged library preloaded),
# send_message from ten senders, a real bullmq Worker sees every message once, in order.
#   [CHAT_OUTBOX_DEBS=<folder>] tests/package/on_release.sh trixie|sid
# Runs as root in a mount namespace of its own (tests/package/lib.sh): the overlay and the bind mounts
# (tests/harness/root.sh) vanish with it; the cached root is never written.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$H_ROOT/tests/harness/root.sh"
RELEASE=${1:?usage: on_release.sh trixie|sid}
case $RELEASE in
trixie) MAJOR=17 ;;
sid) MAJOR=18 ;;
*) fail "no packages are tested for Debian release $RELEASE here (trixie, sid)" ;;
esac
harness_init "package-$RELEASE"

# CHAT_OUTBOX_DEBS=<folder>: test the packages there (a build of that release) instead of building them
if [ -n "${CHAT_OUTBOX_DEBS:-}" ]; then
	debs=("$CHAT_OUTBOX_DEBS"/*.deb)
	echo "ok   testing ${debs[*]}"
else
	package_build "$H_DIR/debs" "$RELEASE"
	debs=("$H_DIR"/debs/*.deb)
fi
expect_eq "packages built for $RELEASE" "chat-outbox postgresql-$MAJOR-chat-outbox" \
	"$(for d in "${debs[@]}"; do dpkg-deb -f "$d" Package; done | sort | xargs)"

# --- the clean root: an overlay of the cached one. What tests/extension/on_major.sh's `make install` left in
# that root goes first (in the overlay), so that only the package can provide the extension.
BASE=$("$H_ROOT/scripts/container.sh" "$MAJOR")
ROOT=$H_DIR/root
mkdir -p "$ROOT" "$H_DIR/rootov/upper" "$H_DIR/rootov/work"
mount -t overlay "rootov-$RELEASE" -o "lowerdir=$BASE,upperdir=$H_DIR/rootov/upper,workdir=$H_DIR/rootov/work" "$ROOT"
ROOT_MOUNTED+=("$ROOT")
rm -f "$ROOT/usr/share/postgresql/$MAJOR/extension"/chat_outbox* "$ROOT/usr/lib/postgresql/$MAJOR/lib"/chat_outbox*
root_copy_tree "$ROOT"
root_mount "$ROOT"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mkdir -p "$ROOT/root/debs"
cp "${debs[@]}" "$ROOT/root/debs/"
indebs=()
for d in "${debs[@]}"; do indebs+=("/root/debs/$(basename "$d")"); done
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
{ in_root apt-get update -q && in_root apt-get install -y -q --no-install-recommends "${indebs[@]}"; } >"$H_DIR/apt.log" 2>&1 ||
	{ tail -n 30 "$H_DIR/apt.log" >&2; fail "apt-get install of the $RELEASE packages in a clean $RELEASE root"; }
for p in chat-outbox "postgresql-$MAJOR-chat-outbox"; do
	expect_eq "$p installed" "install ok installed" "$(in_root dpkg-query -W -f='${Status}' "$p")"
done
echo "ok   apt-get install ./*.deb in a clean $RELEASE root: $(grep -c '^Setting up' "$H_DIR/apt.log") packages set up"

# --- the installed files
root_run "$ROOT" "$MAJOR" installed_files.log extension/installed_files.sh
tail -n 2 "$H_DIR/installed_files.log" | head -n 1
for f in "$ROOT/usr/share/postgresql/$MAJOR/extension"/chat_outbox* "$ROOT/usr/lib/postgresql/$MAJOR/lib"/chat_outbox*; do
	owner=$(in_root dpkg -S "${f#"$ROOT"}" 2>/dev/null | cut -d: -f1 || true)
	expect_eq "package of ${f#"$ROOT"}" "postgresql-$MAJOR-chat-outbox" "$owner"
done
echo "ok   every chat_outbox file in PostgreSQL $MAJOR's folders is postgresql-$MAJOR-chat-outbox's"
for program in chat-outboxd chat-outbox-relay; do
	in_root "$program" --help >"$H_DIR/$program.help" 2>&1 || { cat "$H_DIR/$program.help" >&2; fail "/usr/bin/$program --help in the $RELEASE root"; }
done
echo "ok   chat-outboxd and chat-outbox-relay run on $RELEASE's libraries"

# --- the extension from the package relays: CREATE EXTENSION, send_message, a real bullmq Worker
root_run "$ROOT" "$MAJOR" relay_e2e.log extension/relay_e2e.sh
grep -E '^(ok|not ok)' "$H_DIR/relay_e2e.log" | tail -n 5
echo "ok   the packaged extension on PostgreSQL $MAJOR relays every message once, in order, to a bullmq Worker"
echo PASS
