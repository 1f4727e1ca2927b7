# tests/package/lib.sh - what package.install and package.systemd share; sourced first thing, it also loads
# the harness. The suite runs as root (sudo) in a mount namespace of its own (unshare --mount: the script
# runs again in it), so the overlays below vanish with it.
#   package_build <out> [release]  the packages, unoptimized (DEB_BUILD_OPTIONS noopt, no debug info, no
#                         -dbgsym: half the build's time; these suites test the packaging, the others the
#                         optimized programs), by scripts/package.sh into <out>, for that Debian release
#                         (default bookworm, this machine's; trixie and sid build in a root of theirs)
#   package_overlays      /usr, /etc and /var become overlays whose upper layers are in $H_DIR/overlay, so
#                         what apt and dpkg write never reaches the host's files, which every other suite
#                         uses at the same time; checked, since nothing may be installed otherwise
if [ "${CHAT_OUTBOX_PACKAGE_NS:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || exec sudo -E "$0" "$@"
	CHAT_OUTBOX_PACKAGE_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

package_build() {
	DEB_BUILD_OPTIONS="parallel=$(nproc) noopt nocheck noddebs" DEB_CFLAGS_APPEND=-g0 DEB_CXXFLAGS_APPEND=-g0 \
		"$H_ROOT/scripts/package.sh" --release "${2:-bookworm}" --out "$1" --no-checks >"$H_DIR/package.log" 2>&1 ||
		{ cat "$H_DIR/package.log" >&2; fail "scripts/package.sh failed"; }
}

package_overlays() {
	local tree
	for tree in usr etc var; do
		mkdir -p "$H_DIR/overlay/$tree/upper" "$H_DIR/overlay/$tree/work"
		mount -t overlay "overlay-$tree" -o "lowerdir=/$tree,upperdir=$H_DIR/overlay/$tree/upper,workdir=$H_DIR/overlay/$tree/work" "/$tree"
	done
	for tree in usr etc var; do
		[ "$(findmnt -n -o FSTYPE --mountpoint "/$tree")" = overlay ] || fail "/$tree is not an overlay: nothing may be installed"
	done
	echo "ok   /usr, /etc and /var are overlays; writes land in $H_DIR/overlay"
}
