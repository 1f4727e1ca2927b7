#!/usr/bin/env bash
# extension.installed_files: the chat_outbox files in the server's folders (pg_config --sharedir's extension/
# and --pkglibdir) are exactly the ones this tree's `make install` puts there (the Makefile's
# installed-names), none more and none missing. A file an earlier build left behind (an update script this
# tree no longer ships, such as chat_outbox--managed--1.4.sql) would let a suite pass on one machine and
# fail on a fresh one, where only this build's files exist; a missing one means the suites would test
# another build. No server is started; PG_BIN names the server as for every suite (the host's 15 by
# default). The remedy it prints: `sudo make install` (which removes every chat_outbox file there first).
. "$(dirname "$0")/../harness/lib.sh"
PG_CONFIG=$PG_BIN/pg_config
[ -x "$PG_CONFIG" ] || PG_CONFIG=$(command -v pg_config)
want=$(cd "$H_ROOT" && make -s --no-print-directory installed-names PG_CONFIG="$PG_CONFIG" | tr ' ' '\n' | sort)
[ -n "$want" ] || fail "make installed-names printed nothing"
ext=$("$PG_CONFIG" --sharedir)/extension lib=$("$PG_CONFIG" --pkglibdir)
have=$(find "$ext" "$lib" -maxdepth 1 -name 'chat_outbox*' -printf '%f\n' | sort)
stale=$(comm -13 <(echo "$want") <(echo "$have"))
missing=$(comm -23 <(echo "$want") <(echo "$have"))
[ -z "$stale" ] || fail "installed in $ext or $lib but not made by this build (left by an earlier one; \`sudo make install\` removes them): $(echo $stale)"
[ -z "$missing" ] || fail "made by this build but not installed in $ext or $lib (run \`sudo make install\`): $(echo $missing)"
echo "ok   $(echo "$have" | wc -l) chat_outbox files in $ext and $lib, all this build's"
echo PASS
