#!/usr/bin/env bash
# tests/daemon/gen_config_doc.sh <chat-outboxd>: prints docs/daemon-config.md, generated from --help.
#   tests/daemon/gen_config_doc.sh build/daemon/chat-outboxd > docs/daemon-config.md
set -euo pipefail
echo "# chat-outboxd settings"
echo
echo "Generated from \`chat-outboxd --help\` by \`tests/daemon/gen_config_doc.sh\`; the test \`daemon.config_doc\` fails when"
echo "this file is stale. Every setting is a flag (\`--name value\` or \`--name=value\`) or an environment variable;"
echo "flags win over the environment, which wins over the default."
echo
echo "| flag | environment | type | default | allowed | description |"
echo "|---|---|---|---|---|---|"
"$1" --help | awk '
	/^  --/ { if (name != "") emit(); name = $1; type = $2; gsub(/[<>]/, "", type); state = 1; next }
	state == 1 { help = $0; sub(/^ +/, "", help); gsub(/\|/, "\\|", help); state = 2; next }
	state == 2 {
		line = $0; sub(/^ +env /, "", line)
		n = index(line, ","); env = (n ? substr(line, 1, n - 1) : line); rest = (n ? substr(line, n + 2) : "")
		def = rest; sub(/^default /, "", def); if (rest == "required") def = "*required*"
		state = 3; next
	}
	state == 3 && /^      allowed / { allowed = $0; sub(/^ +allowed /, "", allowed); state = 0; next }
	function emit() {
		printf "| `%s` | `%s` | %s | %s | %s | %s |\n", name, env, type, (def == "" ? "" : (def ~ /^\*/ ? def : "`" def "`")),
		       allowed, help
		def = ""; allowed = ""
	}
	END { if (name != "") emit() }'
