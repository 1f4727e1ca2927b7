#!/usr/bin/env bash
# managed.config_doc: docs/settings.md's relay process section is what scripts/gen_settings_doc.sh makes from
# chat-outbox-relay --help.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
exec bash "$root/scripts/gen_settings_doc.sh" --check relay "${CHAT_OUTBOX_RELAY:-${BUILD_DIR:-$root/build}/relay/chat-outbox-relay}"
