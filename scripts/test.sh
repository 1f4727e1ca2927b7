#!/usr/bin/env bash
# scripts/test.sh - the tests: installs and builds what is missing, then runs CTest.
# The suites start their own PostgreSQL 15 (as an unprivileged user) and redis-server, on ports of
# their own (tests/harness/lib.sh), so they run side by side.
#   scripts/test.sh                 every suite but the long ones and the soaks (the README's test command)
#   scripts/test.sh --long          the long ones (CTest label "long": the Debian packages built and
#                                   installed, the fuzzers, the soaks, the managed mode on PostgreSQL 16-18, the
#                                   extension on 17 and 18 in roots of their Debian release);
#                                   .ci/run runs both commands
#   scripts/test.sh --soak          the soaks (CTest label "soak": hundreds of cut connections), run outside
#                                   both commands, their figures recorded beside their description
#   scripts/test.sh --quick         the edit-build-test loop: unit, pg_regress, isolation and one
#                                   delivery suite per area (CTest label "quick")
#   scripts/test.sh -R unit         only suites matching a CTest regex (extra args go to ctest)
# CHAT_OUTBOX_TEST_JOBS sets how many suites run at once (default 3: most of a suite's time is spent
# waiting on its servers, so three keep two cores busy).
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
label=(-LE 'long|soak')
for a in "$@"; do
	case $a in
	--quick) label=(-L quick) ;;
	--long) label=(-L long) ;;
	--soak) label=(-L soak) ;;
	-R | -L | -LE) label=() args+=("$a") ;; # a selection of its own: nothing left out by label
	*) args+=("$a") ;;
	esac
done
scripts/setup.sh
exec ctest --test-dir build --output-on-failure --timeout 900 -j "${CHAT_OUTBOX_TEST_JOBS:-3}" "${label[@]}" "${args[@]}"
