#!/usr/bin/env bash
# consumer.config_doc: docs/settings.md's daemon section is what scripts/gen_settings_doc.sh makes from
# chat-outboxd --help.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
exec bash "$root/scripts/gen_settings_doc.sh" --check daemon "${CHAT_OUTBOXD:-$root/build/daemon/chat-outboxd}"
