# tests/harness/root.sh - suites of this tree run inside a root filesystem of another Debian release
# (scripts/container.sh), entered with chroot; sourced after lib.sh by tests/extension/on_major.sh and
# tests/package/on_release.sh:
#   root_copy_tree <root>          the tree's tracked files in <root>/src, as a fresh clone has them (a bind
#                                  mount a killed run left there is undone first: rm must never reach the
#                                  host's files through it)
#   root_mount <root>              the host's /proc, /dev, /dev/shm, /dev/pts bound into <root> and the npm
#                                  peers (tests/node_modules: plain JavaScript) read-only in <root>/src, all
#                                  unbound on exit (before the harness's own cleanup)
#   root_run <root> <major> <log> <script> [args]   tests/<script> of the tree, run in the root against that
#                                  release's PostgreSQL <major> (the extension installed there), output in
#                                  $H_DIR/<log>; fails the suite, with the log's tail, when it fails
ROOT_MOUNTED=()

root_copy_tree() {
	local m
	for m in "$1/src/tests/node_modules" "$1/dev/pts" "$1/dev/shm" "$1/dev" "$1/proc"; do
		if mountpoint -q "$m"; then umount "$m"; fi
	done
	rm -rf --one-file-system "$1/src"
	mkdir "$1/src"
	(cd "$H_ROOT" && git ls-files -z | tar --null -T - -c) | tar -x -C "$1/src"
}

root_unmount() {
	local i
	for ((i = ${#ROOT_MOUNTED[@]} - 1; i >= 0; i--)); do umount "${ROOT_MOUNTED[$i]}" || true; done
	ROOT_MOUNTED=()
}

root_mount() {
	local m
	trap 'rc=$?; root_unmount; (exit $rc); harness_cleanup' EXIT
	for m in proc dev dev/shm dev/pts; do
		mountpoint -q "$1/$m" || { mount --bind "/$m" "$1/$m" && ROOT_MOUNTED+=("$1/$m"); }
	done
	mkdir -p "$1/src/tests/node_modules"
	mount --bind "$H_ROOT/tests/node_modules" "$1/src/tests/node_modules"
	ROOT_MOUNTED+=("$1/src/tests/node_modules")
	mount -o remount,bind,ro "$1/src/tests/node_modules"
}

root_run() {
	local root=$1 major=$2 log=$3
	shift 3
	chroot "$root" /usr/bin/env PG_MAJOR="$major" PG_BIN="/usr/lib/postgresql/$major/bin" HARNESS_EXTENSION_MAJOR="$major" \
		H_TMP=/tmp/chat_outbox-tests PATH="/usr/lib/postgresql/$major/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		/bin/bash "/src/tests/$1" "${@:2}" >"$H_DIR/$log" 2>&1 ||
		{ tail -n 60 "$H_DIR/$log" >&2; fail "$1 failed on PostgreSQL $major"; }
}
