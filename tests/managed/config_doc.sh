#!/usr/bin/env bash
# tests/managed/config_doc.sh - docs/managed.md's settings table names every chat-outbox-relay
# setting with its environment variable and default, as --help prints them, and nothing else.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init managed-config-doc
help=$("$CHAT_OUTBOX_RELAY" --help)
doc=$H_ROOT/docs/managed.md
n=0
while read -r flag env default; do
	row=$(grep -F "| \`$flag\` | \`$env\` |" "$doc") || fail "docs/managed.md has no row for $flag ($env)"
	if [ -n "$default" ]; then
		grep -qF "\`${default}\`" <<<"$row" || fail "docs/managed.md: $flag's default is not \`$default\`"
	fi
	n=$((n + 1))
done < <(sed -n 's/^  \(--[a-z-]*\) (\([A-Z_]*\))\( \[\([^]]*\)\]\)\{0,1\}.*/\1 \2 \4/p' <<<"$help")
[ "$n" -gt 0 ] || fail "no setting read from --help"
rows=$(grep -c '^| `--' "$doc")
expect_eq "settings in docs/managed.md" "$n" "$rows"
