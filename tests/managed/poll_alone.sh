#!/usr/bin/env bash
# tests/managed/poll_alone.sh - docs/managed.md, "The poll alone", as an operator follows it: the SQL
# block of that section is read from the page and run as written against a managed install (since
# 1.2 the wake-up trigger is on <service>.outbox_events, and the page named the view, where the
# statement fails), then chat-outbox-relay with a short --poll-interval: a send makes no NOTIFY, and
# its message still reaches Redis, by the poll alone. The block's ENABLE (in its comment) undoes it:
# a send is heard again.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
relay_managed_env managed-poll-alone
doc=$H_ROOT/docs/managed.md
# the first sql block after the section's heading
block=$(awk '/^### The poll alone/ {s = 1; next} s && /^```sql/ {b = 1; next} b && /^```/ {exit} b {print}' "$doc")
[ -n "$block" ] || fail "no SQL block under 'The poll alone' in docs/managed.md"
statement=${block%%;*}
echo "running the page's statement: $statement"
harness_psql "$statement" || fail "the documented statement fails: $statement"
heard() { # notifications a LISTENing session hears around one send
	psql -Xq -v ON_ERROR_STOP=1 "$PGURL" -c "LISTEN chat_outbox_relay" -c "SELECT consumers.send_message(4, 'listened')" \
		-c "SELECT 1" 2>&1 | grep -c 'Asynchronous notification' || true
}
expect_eq "notifications heard with the trigger disabled" 0 "$(heard)"
relay_start poll --poll-interval 200
jobs() { rcli llen bull:chat-messages:wait; }
harness_wait_value 60 -eq 1 jobs || fail "the message did not reach Redis by the poll"
# the comment names the undo: ENABLE TRIGGER
harness_psql "${statement/DISABLE TRIGGER/ENABLE TRIGGER}"
expect_eq "notifications heard with the trigger enabled again" 1 "$(heard)"
harness_wait_value 60 -eq 2 jobs || fail "the second message did not reach Redis"
echo "ok: the poll alone as documented"
