#!/usr/bin/env bash
# tests/extension/moves.sh - a database moved with its outbox sends the backlog once, in order, and never
# again what was relayed before the move (docs/architecture.md, The write-once outbox, Moving a
# database: M1-M3). Real servers: one Redis, PostgreSQL 15 clusters with the extension preloaded.
# Cluster A relays 12 messages (3 chats), then its relay is paused (relay_enabled = off) and a backlog of
# 40 (4 chats) is sent; pg_dump -Fc of its database. Then:
#   1. Another cluster (B, a new initdb: its own system_identifier), its relay paused: pg_restore (the
#      dump's CREATE EXTENSION runs there). send_message refuses with 55000, a rotation step waits for
#      the rebase (and chat_outbox.status.rotation_wait says so); a sender that tries again
#      while refused starts, then B's relay is enabled: its first pass rebases (its log says 40 rows to
#      send again), the sender's 20 messages (5 chats) go through after it.
#   2. pg_restore --clean into A's own database: every origin is A's, nothing is rebased, the writers
#      never refuse; the relay enabled again sends the backlog and what was sent since.
#   3. The same cluster, another database (createdb + pg_restore; the relay pointed at it with
#      chat_outbox.database and a restart): another database oid, rebased as in 1.
#   4. Logical replication, cluster P to cluster S, with the cutover this suite writes out (below): the
#      schema first on S (CREATE EXTENSION, S's relay paused), a publication FOR ALL TABLES, a
#      subscription with copy_data; P relays some messages while replicating, then its relay is paused
#      for a backlog; at the cutover S's outbox refuses writes and rebase_outbox refuses while the
#      subscription is enabled; disabled, S's relay rebases and sends the backlog.
#   5. Another cluster whose relay runs during the restore (R), restored in sections: after pre-data
#      (CREATE EXTENSION) R's relay makes its own cursors and rotation rows for the seed services; the
#      data section's COPY of outbox_rotation collides with R's row (the only error allowed), A's
#      cursors load beside R's (a cursor's key holds its origin); R's relay rebases only once the
#      restore has set the sequences (before, the outbox is "not restored whole yet"), judging by A's
#      cursors: the backlog once (its log says 40), nothing relayed before the move again.
# After each, the queue's record of every send (tests/harness/moves.sh says why it proves it): lost,
# twice, again, out of order, new before backlog, unexpected, all 0. Each move
# relays under its own BullMQ prefix (a restored backlog has the same job ids wherever it goes).
# Rules: every wait is for a state the suite caused, bounded; nothing sleeps and hopes.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$H_ROOT/tests/harness/moves.sh"
harness_init extension-moves
harness_redis_start
harness_pg_start
export REDIS_URL PGURL
A=$PGURL

relay_set() { # relay_set <url> <setting = value>...: ALTER SYSTEM each, one reload
	local url=$1 s
	shift
	for s in "$@"; do psql -XAtq -v ON_ERROR_STOP=1 "$url" -c "ALTER SYSTEM SET chat_outbox.$s"; done
	psql -XAtq -v ON_ERROR_STOP=1 "$url" -c "SELECT pg_reload_conf()" >/dev/null
}
relay_pause() { # relay_pause <url>: relay_enabled = off, and the worker says it paused
	relay_set "$1" "relay_enabled = off"
	harness_wait_value 20 = paused relay_status relay_state "$1"
}
super() { psql -XAtq -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$1/postgres" -c "$2"; }
restore() { # restore <url> [pg_restore flags...]: the dump, stopping at the first error
	pg_restore --exit-on-error -d "$1" "${@:2}" "$H_DIR/chat.dump" >"$H_DIR/restore.log" 2>&1 ||
		fail "pg_restore into $1: $(cat "$H_DIR/restore.log")"
}
settle() { # settle <url> <what>: every outbox rebased, nothing unsent
	harness_wait_for 60 moves_settled "$1" || fail "$2: $(psql -XAtq "$1" -c "SELECT service, unsent, relay_state, last_error FROM chat_outbox.status")"
}

# A: some messages relayed, then a backlog with the relay paused, and the dump
moves_send "$A" old 12 3 "$H_DIR/old.txt"
settle "$A" "A: relaying"
expect_eq "A: jobs in Redis before the move" 12 "$(moves_adds bull | grep -c '^added ')"
relay_pause "$A"
moves_send "$A" backlog 40 4 "$H_DIR/backlog.txt"
expect_eq "A: backlog unsent" 40 "$(relay_status unsent "$A")"
pg_dump -Fc -d "$A" -f "$H_DIR/chat.dump"
echo "ok   A: 12 messages relayed, 40 unsent, dumped"

# 1. another cluster
harness_pg_cluster "$H_DIR/pgdata-b" "" "chat_outbox.relay_enabled = off"
B=postgresql://postgres@127.0.0.1:$CLUSTER_PORT/chat
super "$CLUSTER_PORT" "CREATE DATABASE chat"
restore "$B"
expect_eq "B: outboxes from another database" 2 "$(moves_moved "$B")"
moves_refused "$B" "B"
moves_rotation_waits "$B" "B"
moves_sender_start "$B" new 20 5 "$H_DIR/b-new.txt"
relay_set "$B" "relay_enabled = on"
moves_sender_wait
settle "$B" "B: the backlog"
expect_eq "B: rows its rebase sends again (its log)" 40 "$(moves_rebased "$H_DIR/pgdata-b.log")"
echo "     B: $(wc -l <"$H_DIR/b-new.txt.refused") sends refused before the rebase, then went through"
moves_verify "another cluster" bull "" "$H_DIR/old.txt" "$H_DIR/backlog.txt" "$H_DIR/b-new.txt"

# 2. pg_restore --clean into A itself: its own xids, nothing to rebase
restore "$A" --clean
expect_eq "A after --clean: outboxes from another database" 0 "$(moves_moved "$A")"
moves_send "$A" new 20 5 "$H_DIR/clean-new.txt" # the writers do not refuse (the relay is still paused)
relay_set "$A" "bullmq_prefix = 'clean'" "relay_enabled = on"
settle "$A" "A after --clean"
expect_eq "A after --clean: rebases logged" 0 "$(moves_rebase_lines "$H_DIR/postgres.log")"
moves_verify "pg_restore --clean into A" clean "$H_DIR/old.txt" "$H_DIR/backlog.txt" "$H_DIR/clean-new.txt"

# 3. the same cluster, another database: the relay serves one database (chat_outbox.database, restart)
relay_pause "$A"
super "$PG_PORT" "CREATE DATABASE chat_copy"
COPY=postgresql://postgres@127.0.0.1:$PG_PORT/chat_copy
restore "$COPY"
relay_set "$A" "database = 'chat_copy'" "bullmq_prefix = 'copy'"
harness_pg_ctl -w restart >/dev/null
expect_eq "chat_copy: outboxes from another database" 2 "$(moves_moved "$COPY")"
moves_refused "$COPY" "chat_copy"
moves_sender_start "$COPY" new 20 5 "$H_DIR/copy-new.txt"
relay_set "$COPY" "relay_enabled = on"
moves_sender_wait
settle "$COPY" "chat_copy: the backlog"
expect_eq "chat_copy: rows its rebase sends again (the log)" 40 "$(moves_rebased "$H_DIR/postgres.log")"
moves_verify "the same cluster, another database" copy "$H_DIR/old.txt" "$H_DIR/backlog.txt" "$H_DIR/copy-new.txt"

# 4. logical replication. The cutover, as this suite runs it:
#   a. S: the schema first (CREATE EXTENSION, with S's relay paused: relay_enabled = off until the
#      cutover, its passes would make cursors and rotation rows the copy then collides with), then
#      DELETE FROM chat_outbox.services (the seed services' rows: P's come with the copy)
#   b. P: CREATE PUBLICATION ... FOR ALL TABLES; S: CREATE SUBSCRIPTION ... WITH (copy_data = true)
#   c. the cutover: the writers stop on P, P's relay stops (relay_enabled = off, status paused), S has
#      caught up (P's slot confirmed P's pg_current_wal_lsn()); S: ALTER SUBSCRIPTION ... DISABLE, every
#      sequence set to P's value (logical replication carries none: the inbox's seq identity would
#      collide); S's relay enabled: its first pass rebases; the writers move to S; DROP SUBSCRIPTION
harness_pg_cluster "$H_DIR/pgdata-p" "" "wal_level = logical" "chat_outbox.bullmq_prefix = 'logical'"
P_PORT=$CLUSTER_PORT
P=postgresql://postgres@127.0.0.1:$P_PORT/chat
harness_pg_cluster "$H_DIR/pgdata-s" "" "chat_outbox.relay_enabled = off" "chat_outbox.bullmq_prefix = 'logical'"
S=postgresql://postgres@127.0.0.1:$CLUSTER_PORT/chat
super "$P_PORT" "CREATE DATABASE chat"
psql -XAtq -v ON_ERROR_STOP=1 "$P" -c "CREATE EXTENSION chat_outbox"
super "$CLUSTER_PORT" "CREATE DATABASE chat"
psql -XAtq -v ON_ERROR_STOP=1 "$S" -c "CREATE EXTENSION chat_outbox" -c "DELETE FROM chat_outbox.services"
moves_send "$P" old 6 3 "$H_DIR/logical-old.txt" # copied by the subscription
psql -XAtq -v ON_ERROR_STOP=1 "$P" -c "INSERT INTO workers.inbox (message_id, chat_id, body)
	SELECT gen_random_uuid(), 1, 'received on P ' || n FROM generate_series(1, 3) n" # what chat-outboxd writes
psql -XAtq -v ON_ERROR_STOP=1 "$P" -c "CREATE PUBLICATION chat_move FOR ALL TABLES"
psql -XAtq -v ON_ERROR_STOP=1 "$S" -c "SET client_min_messages = warning" -c "CREATE SUBSCRIPTION chat_move
	CONNECTION 'host=127.0.0.1 port=$P_PORT dbname=chat user=postgres' PUBLICATION chat_move WITH (copy_data = true)"
moves_send "$P" old 6 3 "$H_DIR/logical-old.txt" # streamed
settle "$P" "P: relaying"
synced() { [ "$(psql -XAtq "$S" -c "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'")" = 0 ]; }
harness_wait_for 60 synced || fail "S: tables not synced: $(psql -XAtq "$S" -c "SELECT srrelid::regclass, srsubstate FROM pg_subscription_rel WHERE srsubstate <> 'r'")"
relay_pause "$P"
# P draws xids that do not replicate (S replays only P's writes, so its own xids would otherwise keep pace
# with P's, and a cursor judged by S's counter would happen to be right)
for _ in $(seq 300); do echo "SELECT pg_current_xact_id();"; done | psql -XAtq "$P" -f - >/dev/null
moves_send "$P" backlog 40 4 "$H_DIR/logical-backlog.txt"
# the cutover: nothing is written on P from here; S catches up
lsn=$(psql -XAtq -v ON_ERROR_STOP=1 "$P" -c "SELECT pg_current_wal_lsn()")
caught_up() { [ "$(psql -XAtq "$P" -c "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name = 'chat_move'")" = t ]; }
harness_wait_for 60 caught_up || fail "S never caught up with P's $lsn"
expect_eq "S: messages replicated" 52 "$(psql -XAtq "$S" -c "SELECT count(*) FROM consumers.messages")"
expect_eq "S: outboxes from another database" 2 "$(moves_moved "$S")"
moves_refused "$S" "S while subscribed"
out=$(psql -XAtq -v ON_ERROR_STOP=1 -v VERBOSITY=verbose "$S" -c "SELECT chat_outbox.rebase_outbox('consumers')" 2>&1) &&
	fail "S: rebase_outbox went through with the subscription enabled: $out"
echo "$out" | grep '^ERROR:  55000: .* this database has an enabled subscription' >/dev/null || fail "S: rebase_outbox failed otherwise: $out"
echo "ok   S: rebase_outbox refused with 55000 while the subscription is enabled"
psql -XAtq -v ON_ERROR_STOP=1 "$S" -c "ALTER SUBSCRIPTION chat_move DISABLE"
moves_sync_sequences "$P" "$S"
moves_sender_start "$S" new 20 5 "$H_DIR/logical-new.txt"
relay_set "$S" "relay_enabled = on"
moves_sender_wait
settle "$S" "S: the backlog"
expect_eq "S: rows its rebase sends again (its log)" 40 "$(moves_rebased "$H_DIR/pgdata-s.log")"
moves_verify "logical replication" logical "" "$H_DIR/logical-old.txt" "$H_DIR/logical-backlog.txt" "$H_DIR/logical-new.txt"
psql -XAtq -v ON_ERROR_STOP=1 "$S" -c "INSERT INTO workers.inbox (message_id, chat_id, body) VALUES (gen_random_uuid(), 1, 'received on S')"
expect_eq "S: the inbox's seq after the cutover" 4 "$(psql -XAtq "$S" -c "SELECT seq FROM workers.inbox WHERE body = 'received on S'")"
psql -XAtq -v ON_ERROR_STOP=1 "$S" -c "SET client_min_messages = warning" -c "DROP SUBSCRIPTION chat_move"
expect_eq "P: the subscription's slot dropped" 0 "$(psql -XAtq "$P" -c "SELECT count(*) FROM pg_replication_slots")"

# 5. another cluster whose relay runs during the restore (R: relay_enabled on, its own prefix), restored
# in sections as a restore with a relay running goes: pre-data makes the extension (CREATE EXTENSION),
# whose relay then makes its own cursors and rotation rows for the seed services (R's snapshots: origin
# R); the data section's COPY of outbox_rotation then conflicts with R's row (the only error allowed:
# pg_restore reports it and goes on; the rebase makes the rotation anew), and A's cursors load beside
# R's. The data section copies chat_outbox's tables (A's origins: the outbox is moved from then on)
# before the outboxes' rows, and sets the sequences last: a relay pass in between finds the id sequence
# behind A's cursors and refuses to rebase ("not restored whole yet"), so the rebase sees every row,
# and judges them by A's cursors: the backlog once, nothing relayed before the move again. A sender
# started as the data section ends tries again while refused.
harness_pg_cluster "$H_DIR/pgdata-r" "" "chat_outbox.bullmq_prefix = 'running'"
R=postgresql://postgres@127.0.0.1:$CLUSTER_PORT/chat
super "$CLUSTER_PORT" "CREATE DATABASE chat"
restore "$R" --section=pre-data
own_cursors() { psql -XAtq "$R" -c "SELECT count(DISTINCT service) FROM chat_outbox.outbox_cursors WHERE service IN ('consumers', 'workers')"; }
harness_wait_value 30 = 2 own_cursors || fail "R: its relay made no cursors of its own: $(psql -XAtq "$R" -c "SELECT * FROM chat_outbox.status")"
echo "ok   R: its relay made its own cursors for the seed services after the pre-data section"
pg_restore -d "$R" --section=data "$H_DIR/chat.dump" >"$H_DIR/restore-data.log" 2>&1 && fail "R: the data section restored without a conflict"
# exactly one error, the COPY of outbox_rotation colliding with R's own row (its relay's), reported as ignored
errors=$(grep -c '^pg_restore: error: ' "$H_DIR/restore-data.log" || true)
conflicts=$(grep -c '^pg_restore: error: COPY failed for table "outbox_rotation": ERROR:  duplicate key value violates unique constraint "outbox_rotation_pkey"$' "$H_DIR/restore-data.log" || true)
[ "$errors" = 1 ] && [ "$conflicts" = 1 ] && grep '^pg_restore: warning: errors ignored on restore: 1$' "$H_DIR/restore-data.log" >/dev/null ||
	fail "R: the data section's errors are not exactly the COPY of outbox_rotation: $(cat "$H_DIR/restore-data.log")"
echo "ok   R: the data section's only error: the COPY of outbox_rotation collides with R's relay's row"
moves_sender_go "$R" new 20 5 "$H_DIR/r-new.txt"
restore "$R" --section=post-data
moves_sender_wait
settle "$R" "R: the backlog"
expect_eq "R: rows its rebase sends again (its log: judged by A's cursors)" 40 "$(moves_rebased "$H_DIR/pgdata-r.log")"
echo "     R: $(wc -l <"$H_DIR/r-new.txt.refused") sends refused before the rebase, then went through"
moves_verify "another cluster, its relay running during the restore" running "$H_DIR/old.txt" \
	"$H_DIR/backlog.txt" "$H_DIR/r-new.txt"
