#!/usr/bin/env bash
# sql/managed/copy_services.sh <from> <to> [service...] - copy services' messages, outbox and inbox
# rows, as they are (sent_at included), from one chat_outbox database to another, and move each
# identity sequence past the copied ids. The data step of switching between the extension and the
# managed install (docs/managed.md). <from> and <to> are libpq URIs or connection strings; the
# services default to every row of <from>'s chat_outbox.services, and must exist in <to> (created
# by its install or create_service) with empty tables. Run it while nothing writes to <from> and no
# relay runs on either side. pg_dump cannot do it alone: it leaves out the data of the extension's
# own tables unless it dumps the extension itself.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 <from> <to> [service...]" >&2; exit 2; }
from=$1 to=$2
shift 2
services=("$@")
if [ ${#services[@]} -eq 0 ]; then
	mapfile -t services < <(psql -XAtq -v ON_ERROR_STOP=1 "$from" -c "SELECT name FROM chat_outbox.services ORDER BY name")
fi
for s in "${services[@]}"; do
	for t in messages outbox inbox; do
		# COPY writes identity columns as given (like OVERRIDING SYSTEM VALUE), so ids and seqs are kept
		psql -XAtq -v ON_ERROR_STOP=1 "$from" -c "COPY \"$s\".$t TO STDOUT" |
			psql -XAtq -v ON_ERROR_STOP=1 "$to" -c "COPY \"$s\".$t FROM STDIN"
	done
	psql -XAtq -v ON_ERROR_STOP=1 "$to" >/dev/null <<SQL
SELECT setval(pg_get_serial_sequence('"$s".outbox', 'id'), coalesce(max(id), 1), max(id) IS NOT NULL) FROM "$s".outbox;
SELECT setval(pg_get_serial_sequence('"$s".inbox', 'seq'), coalesce(max(seq), 1), max(seq) IS NOT NULL) FROM "$s".inbox;
SQL
	echo "copied service $s"
done
