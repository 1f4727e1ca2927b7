#!/usr/bin/env bash
# scripts/gen_settings_doc.sh - the generated sections of docs/settings.md, from the programs' --help.
#   scripts/gen_settings_doc.sh --relay build/relay/chat-outbox-relay    the relay process's section
#   scripts/gen_settings_doc.sh --daemon build/daemon/chat-outboxd       the daemon's section
#   scripts/gen_settings_doc.sh --page docs/settings.md build/relay/chat-outbox-relay build/daemon/chat-outboxd
#                                     the whole page: its hand-kept part (everything before the relay's
#                                     heading), then both sections; to regenerate it:
#   scripts/gen_settings_doc.sh --page docs/settings.md build/relay/chat-outbox-relay build/daemon/chat-outboxd \
#       > /tmp/settings.md && mv /tmp/settings.md docs/settings.md
#   scripts/gen_settings_doc.sh --check relay|daemon <program> [page]
#                                     diffs that section of the page (default docs/settings.md: from its heading to
#                                     the next "## " heading or the end) with what --relay or --daemon prints; the
#                                     tests managed.config_doc and consumer.config_doc run it
set -euo pipefail
. "$(dirname "$0")/settings_rows.sh"
RELAY_HEADING='## The relay process (`chat-outbox-relay`, managed Postgres only)'
DAEMON_HEADING='## The daemon (`chat-outboxd`)'

relay_section() {
	echo "$RELAY_HEADING"
	echo "Generated from \`chat-outbox-relay --help\`. Each is a flag and an environment variable; a flag wins. A value"
	echo "out of range stops the start with exit code 2 and a message naming the setting. What the extension reads from"
	echo "\`chat_outbox.*\` settings, the managed install reads from the table \`chat_outbox.settings\` (\`max_body_bytes\`,"
	echo "\`retention\`, \`inbox_retention\`): [managed.md](managed.md)."
	echo
	echo "| flag | environment | default | allowed | description |"
	echo "|---|---|---|---|---|"
	relay_rows "$1" | awk -F'\t' '{
		help = $7; gsub(/\|/, "\\|", help)
		printf "| `%s` | `%s` | %s | %s | %s |\n", $1, $2, ($4 == "" ? "" : "`" $4 "`"), $6, help
	}'
}

daemon_section() {
	echo "$DAEMON_HEADING"
	echo "Generated from \`chat-outboxd --help\`. Every setting is a flag (\`--name value\` or \`--name=value\`) or an"
	echo "environment variable; flags win over the environment, which wins over the default. A value outside its allowed"
	echo "range, or a \`--prefix\` or \`--queue\` that is empty or contains \`:\`, stops the start with exit code 2 and a"
	echo "message naming the setting (a secret's value is never shown)."
	echo
	echo "| flag | environment | type | default | allowed | description |"
	echo "|---|---|---|---|---|---|"
	daemon_rows "$1" | awk -F'\t' '{
		help = $7; gsub(/\|/, "\\|", help)
		def = ($5 == 1 ? "*required*" : ($4 == "" ? "" : "`" $4 "`"))
		printf "| `%s` | `%s` | %s | %s | %s | %s |\n", $1, $2, $3, def, $6, help
	}'
}

case "${1:-}" in
--relay) relay_section "$2" ;;
--daemon) daemon_section "$2" ;;
--check)
	page=${4:-$(dirname "$0")/../docs/settings.md}
	if [ "$2" = relay ]; then heading=$RELAY_HEADING; else heading=$DAEMON_HEADING; fi
	if ! diff -u <(awk -v h="$heading" '$0 == h {on = 1} on && /^## / && $0 != h {exit} on' "$page" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}') \
		<("$0" "--$2" "$3"); then
		echo "FAIL: $page's $2 section is stale; regenerate the page with $0 --page (see its header)" >&2
		exit 1
	fi
	echo PASS
	;;
--page)
	awk -v h="$RELAY_HEADING" '$0 == h {exit} {print}' "$2"
	relay_section "$3"
	echo
	daemon_section "$4"
	;;
*) echo "usage: $0 --relay <chat-outbox-relay> | --daemon <chat-outboxd> | --page <page> <chat-outbox-relay> <chat-outboxd>" >&2; exit 2 ;;
esac
