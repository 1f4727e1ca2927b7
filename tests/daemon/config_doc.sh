#!/usr/bin/env bash
# daemon.config_doc: docs/daemon-config.md equals what gen_config_doc.sh makes from --help, and the
# README's daemon settings table carries the same rows (one name per setting everywhere).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${CHAT_OUTBOXD:-$root/build/daemon/chat-outboxd}
generated=$(bash "$root/tests/daemon/gen_config_doc.sh" "$bin")
if ! diff -u "$root/docs/daemon-config.md" <(echo "$generated"); then
	echo "FAIL: docs/daemon-config.md is stale; regenerate: tests/daemon/gen_config_doc.sh $bin > docs/daemon-config.md" >&2
	exit 1
fi
missing=$(grep '^| `--' <<<"$generated" | grep -vxFf "$root/README.md" || true)
if [ -n "$missing" ]; then
	echo "FAIL: README.md's daemon settings table lacks or differs in:" >&2
	echo "$missing" >&2
	exit 1
fi
echo PASS
