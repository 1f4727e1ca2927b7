# scripts/settings_rows.sh - the settings a program's --help lists, one tab-separated row each (sourced by
# scripts/gen_settings_doc.sh and scripts/gen_env_files.sh, so the page and the env files read --help alike):
#   flag  env  type  default  required  allowed  description
# type is empty for the relay (its --help gives none); required is 1 or 0; allowed reads "1 to 5000".

# chat-outbox-relay --help: "  --name (ENV) [default] {lo..hi}" then "      description"
relay_rows() {
	"$1" --help | awk '
		/^  --/ {
			name = $1; env = $2; gsub(/[()]/, "", env); def = ""; allowed = ""
			if (match($0, /\[[^]]*\]/)) def = substr($0, RSTART + 1, RLENGTH - 2)
			if (match($0, /\{[^}]*\}/)) { allowed = substr($0, RSTART + 1, RLENGTH - 2); sub(/\.\./, " to ", allowed) }
			getline help; sub(/^ +/, "", help)
			printf "%s\t%s\t\t%s\t0\t%s\t%s\n", name, env, def, allowed, help
		}'
}

# chat-outboxd --help: "  --name <type>", "      description", "      env ENV[, default D | , required]",
# and optionally "      allowed A"
daemon_rows() {
	"$1" --help | awk '
		/^  --/ { if (name != "") emit(); name = $1; type = $2; gsub(/[<>]/, "", type); state = 1; next }
		state == 1 { help = $0; sub(/^ +/, "", help); state = 2; next }
		state == 2 {
			line = $0; sub(/^ +env /, "", line)
			n = index(line, ","); env = (n ? substr(line, 1, n - 1) : line); rest = (n ? substr(line, n + 2) : "")
			def = rest; sub(/^default /, "", def); required = 0
			if (rest == "required") { def = ""; required = 1 }
			state = 3; next
		}
		state == 3 && /^      allowed / { allowed = $0; sub(/^ +allowed /, "", allowed); state = 0; next }
		function emit() {
			printf "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", name, env, type, def, required, allowed, help
			def = ""; allowed = ""
		}
		END { if (name != "") emit() }'
}
