#!/usr/bin/env bash
# sql/managed/copy_services.sh <from> <to> [service...] - copy services' messages, client message ids and inbox rows as
# they are, and the outbox rows not sent yet (refused ones with their reasons), with their ids, from
# one chat_outbox database (1.3 on) to another of 1.6, and move each sequence past the copied ids (the target's
# inbox triggers fill its inbox_waiting from the copied inbox rows as they come). Sent outbox
# rows stay behind: what is sent is the source relay's cursors' to say, and the copied rows are
# written by the target's own transaction (its xid), so the target's relay sends exactly them. The data step of switching between the extension and the
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
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for s in "${services[@]}"; do
	tables=(messages inbox)
	# the client message ids (1.6 on): a send repeated after the switch is answered with its message
	[ "$(psql -XAtq -v ON_ERROR_STOP=1 "$from" -c "SELECT to_regclass('\"$s\".client_msg_ids') IS NOT NULL")" = t ] && tables+=(client_msg_ids)
	for t in "${tables[@]}"; do
		# COPY writes identity columns as given (like OVERRIDING SYSTEM VALUE), so ids and seqs are kept
		psql -XAtq -v ON_ERROR_STOP=1 "$from" -c "COPY \"$s\".$t TO STDOUT" |
			psql -XAtq -v ON_ERROR_STOP=1 "$to" -c "COPY \"$s\".$t FROM STDIN"
	done
	psql -XAtq -v ON_ERROR_STOP=1 "$from" -c "COPY (SELECT id, chat_id, event, payload, created_at, refused FROM \"$s\".outbox
		WHERE sent_at IS NULL ORDER BY id) TO STDOUT" >"$tmp"
	top=$(psql -XAtq -v ON_ERROR_STOP=1 "$from" -c "SELECT greatest(coalesce(max(id), 0), coalesce(pg_sequence_last_value('\"$s\".outbox_id_seq'), 0)) FROM \"$s\".outbox")
	psql -XAtq -v ON_ERROR_STOP=1 "$to" >/dev/null <<SQL
BEGIN;
SELECT pg_current_xact_id(); -- the xid before the rows (their ids are the source's)
CREATE TEMP TABLE copied (id bigint, chat_id bigint, event text, payload jsonb, created_at timestamptz, refused text) ON COMMIT DROP;
\copy copied FROM '$tmp'
-- gen: the generation that takes rows now (the column's default, chat_outbox.outbox_generation)
INSERT INTO "$s".outbox_events (id, chat_id, event, payload, created_at)
	SELECT c.id, c.chat_id, c.event, c.payload, c.created_at FROM copied c ORDER BY c.id;
INSERT INTO "$s".outbox_refused (id, gen, reason)
	SELECT c.id, e.gen, c.refused FROM copied c JOIN "$s".outbox_events e ON e.id = c.id WHERE c.refused IS NOT NULL;
SELECT setval('"$s".outbox_id_seq', greatest($top, 1), $top > 0);
SELECT setval(pg_get_serial_sequence('"$s".inbox', 'seq'), coalesce(max(seq), 1), max(seq) IS NOT NULL) FROM "$s".inbox;
COMMIT;
SQL
	echo "copied service $s"
done
