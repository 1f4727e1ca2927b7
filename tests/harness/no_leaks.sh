#!/usr/bin/env bash
# harness.no_leaks: a test leaves no process of its own behind. A suite often starts a peer as
# `(cd dir && node peer.mjs ...) &` and tracks $!, the subshell; stopping the subshell does not stop
# the node process under it, which then outlives the test (and kept polling a Redis long gone). Here an
# inner test starts such a pair, a grandchild under a tracked subshell and an untracked background
# child, and exits: once its cleanup ran, none of them may still run.
. "$(dirname "$0")/lib.sh"
harness_init harness-no-leaks
pids=$H_DIR/pids
H_TMP=$H_DIR bash -c '
	. "$1/lib.sh"
	harness_init inner
	(cd /tmp && sh -c "echo \$\$ >>$2; exec sleep 1001") &
	harness_track $!
	sh -c "echo \$\$ >>$2; exec sleep 1002" &
	both_started() { [ -f "$1" ] && [ "$(wc -l <"$1")" -eq 2 ]; }
	harness_wait_for 10 both_started "$2"
' inner "$(dirname "$0")" "$pids" 2>"$H_DIR/inner.log" || { cat "$H_DIR/inner.log" >&2; fail "the inner test failed"; }
for pid in $(cat "$pids"); do
	if kill -0 "$pid" 2>/dev/null; then
		what=$(tr '\0' ' ' <"/proc/$pid/cmdline")
		kill -9 "$pid"
		fail "process $pid ($what) outlived its test"
	fi
done
echo "ok: a tracked subshell's child and an untracked background child are stopped with the test"
echo PASS
