# tests/harness/assert.sh - the assertions of the shell suites (loaded by lib.sh).
#   fail <message...>              print "FAIL <message>" and end the test
#   expect_eq <what> <want> <got>  fail unless got equals want; print "ok: <what> = <got>" otherwise
# A failing assertion exits: the EXIT trap then stops the servers and prints their logs.

fail() {
	echo "FAIL $*" >&2
	exit 1
}

expect_eq() {
	[ "$2" = "$3" ] || fail "$1: want '$2', got '$3'"
	echo "ok: $1 = $3"
}
