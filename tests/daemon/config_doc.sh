#!/usr/bin/env bash
# daemon.config_doc: docs/daemon-config.md equals what gen_config_doc.sh makes from --help.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${CHAT_OUTBOXD:-$root/build/daemon/chat-outboxd}
if ! diff -u "$root/docs/daemon-config.md" <(bash "$root/tests/daemon/gen_config_doc.sh" "$bin"); then
	echo "FAIL: docs/daemon-config.md is stale; regenerate: tests/daemon/gen_config_doc.sh $bin > docs/daemon-config.md" >&2
	exit 1
fi
echo PASS
