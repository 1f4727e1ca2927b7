#!/usr/bin/env bash
# scripts/gen_env_files.sh - the packages' example env files, one per unit instance, from the programs' --help
# (so each lists every setting the program reads from its environment, with its default):
#   scripts/gen_env_files.sh <chat-outboxd> <chat-outbox-relay> <dir>
# writes <dir>/workers.env and <dir>/consumers.env (chat-outboxd@workers, @consumers: the two services
# CREATE EXTENSION makes, as in docs/deploy.md) and <dir>/relay-chat.env (chat-outbox-relay@chat).
# debian/rules installs them as conffiles in /etc/chat-outbox/.
set -euo pipefail
. "$(dirname "$0")/settings_rows.sh"
[ $# -eq 3 ] || { echo "usage: $0 <chat-outboxd> <chat-outbox-relay> <dir>" >&2; exit 2; }
daemon=$1 relay=$2 dir=$3
mkdir -p "$dir"

# env_file <rows command> <program> <template unit> <instance> <secrets> [VAR=value...]: the settings as
# commented lines showing their default, except the given ones, set.
env_file() {
	local rows=$1 program=$2 template=$3 instance=$4 secrets=$5 file prefix
	shift 5
	prefix=${template#chat-outbox}; prefix=${prefix%d}; prefix=${prefix#-}; prefix=${prefix:+$prefix-}
	file=$prefix$instance.env
	cat <<HEAD
# /etc/chat-outbox/$file: the settings of $template@$instance (systemctl start $template@$instance),
# generated from \`$(basename "$program") --help\`. systemd reads it (EnvironmentFile=): one VARIABLE=value a line,
# the value taken as written (no quotes, no shell expansion). A commented line shows the default.
# It holds secrets ($secrets): keep it mode 0640, owner root, group chat-outbox.
# Another instance <name> reads /etc/chat-outbox/$prefix<name>.env:
#   install -m 0640 -o root -g chat-outbox /etc/chat-outbox/$file /etc/chat-outbox/$prefix<name>.env
HEAD
	"$rows" "$program" | awk -F'\t' -v set="$*" '
		BEGIN { n = split(set, kv, " "); for (i = 1; i <= n; i++) { j = index(kv[i], "="); val[substr(kv[i], 1, j - 1)] = substr(kv[i], j + 1) } }
		{
			printf "\n# %s: %s\n", $1, $7
			if ($6 != "") printf "# allowed: %s\n", $6
			if ($2 in val) printf "%s=%s\n", $2, val[$2]
			else if ($5 == 1) printf "# required\n%s=\n", $2
			else printf "#%s=%s\n", $2, $4
		}'
}

DAEMON_SECRETS="the JWT secret, passwords in the URLs"
env_file daemon_rows "$daemon" chat-outboxd workers "$DAEMON_SECRETS" \
	CHAT_OUTBOXD_SERVICE=workers CHAT_OUTBOXD_QUEUE=chat-messages CHAT_OUTBOXD_LISTEN=127.0.0.1:8081 >"$dir/workers.env"
env_file daemon_rows "$daemon" chat-outboxd consumers "$DAEMON_SECRETS" \
	CHAT_OUTBOXD_SERVICE=consumers CHAT_OUTBOXD_QUEUE=chat-replies CHAT_OUTBOXD_LISTEN=127.0.0.1:8082 >"$dir/consumers.env"
env_file relay_rows "$relay" chat-outbox-relay chat "passwords in the URLs" >"$dir/relay-chat.env"
