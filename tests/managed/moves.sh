#!/usr/bin/env bash
# tests/managed/moves.sh - the managed install moved with its outbox sends the backlog once, in order,
# and never again what was relayed before the move (docs/architecture.md, The write-once outbox,
# Moving a database: M1-M3); tests/extension/moves.sh in managed mode. Real servers: one Redis,
# PostgreSQL clusters that load no library of ours, each database owned by the non-superuser chat_owner
# (who dumps and restores it), relayed by chat-outbox-relay.
# Cluster A's relay relays 12 messages (3 chats), then it is stopped and a backlog of 40 (4 chats) is
# sent; pg_dump -Fc of its database (the dump holds the whole install). Then:
#   1. Another cluster (B, a new initdb: its own system_identifier): pg_restore into an empty database.
#      send_message refuses with 55000, a rotation step waits for the rebase (and
#      chat_outbox.status.rotation_wait says so); a sender that tries again while refused starts, then a relay
#      starts against B: its first pass rebases (B's log says 40 rows to send again), the sender's 20
#      messages (5 chats) go through after it.
#   2. pg_restore --clean into A's own database: every origin is A's, nothing is rebased, the writers
#      never refuse; a relay sends the backlog and what was sent since. (pg_restore --clean reports one
#      error per outbox partition: it cannot drop a primary key the partition inherits; it drops the
#      tables after, and nothing else may fail.)
#   3. The same cluster, another database (CREATE DATABASE + pg_restore): another database oid, rebased
#      as in 1 by a relay started against it.
#   4. Logical replication, cluster P to cluster S, with the cutover of tests/extension/moves.sh: the
#      managed install first on S (no relay), the rows the install seeds deleted there (the copy brings
#      P's), a publication FOR ALL TABLES and a subscription with copy_data (the provider's admin, a
#      superuser on 15); P's relay relays some messages while replicating, then stops for a backlog; at
#      the cutover S's outbox refuses writes and rebase_outbox refuses while the subscription is
#      enabled; disabled, a relay started against S rebases and sends the backlog.
# After each, the queue's record of every send (tests/harness/moves.sh says why it proves it): lost,
# twice, again, out of order, new before backlog, unexpected, all 0. Each move relays under its own
# BullMQ prefix (a restored backlog has the same job ids wherever it goes).
# Rules: every wait is for a state the suite caused, bounded; nothing sleeps and hopes.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$H_ROOT/tests/harness/moves.sh"
harness_init managed-moves
export HARNESS_PG_MANAGED=1
harness_redis_start
harness_pg_start
export REDIS_URL PGURL
A=$PGURL

relay_at() { # relay_at <url> <name> [flags...]: a chat-outbox-relay against that database
	PGURL=$1 relay_start "$2" "${@:3}"
}
relay_stop() { # the last relay started: SIGTERM, and it exits 0
	kill -TERM "$RELAY_PID"
	wait "$RELAY_PID" || fail "relay exited $? on SIGTERM"
}
super() { psql -XAtq -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$1/${3:-postgres}" -c "$2"; }
managed_cluster() { # managed_cluster <name> [conf...]: a new cluster with database chat owned by chat_owner; sets CHAT
	harness_pg_cluster "$H_DIR/pgdata-$1" "" "${@:2}"
	super "$CLUSTER_PORT" "CREATE ROLE chat_owner LOGIN"
	super "$CLUSTER_PORT" "CREATE DATABASE chat OWNER chat_owner"
	CHAT=postgresql://chat_owner@127.0.0.1:$CLUSTER_PORT/chat
}
install() { # install <url>: the managed install, as the owner
	psql -XAtq -v ON_ERROR_STOP=1 "$1" -f "$H_ROOT/sql/managed/chat_outbox_managed.sql" >"$H_DIR/install.log" 2>&1 ||
		fail "install into $1: $(cat "$H_DIR/install.log")"
}
restore() { # restore <url> [pg_restore flags...]: the dump, as the owner, stopping at the first error
	pg_restore --exit-on-error -d "$1" "${@:2}" "$H_DIR/chat.dump" >"$H_DIR/restore.log" 2>&1 ||
		fail "pg_restore into $1: $(cat "$H_DIR/restore.log")"
}
restore_clean() { # restore_clean <url>: pg_restore --clean, which cannot drop the outbox partitions' primary keys
	# (inherited from outbox_events': PostgreSQL's pg_restore, not ours), goes on and drops them with their
	# tables; any other error fails
	local errors
	pg_restore --clean -d "$1" "$H_DIR/chat.dump" >"$H_DIR/restore.log" 2>&1 || true
	errors=$(grep -c 'ERROR: ' "$H_DIR/restore.log" || true)
	[ "$(grep 'ERROR: ' "$H_DIR/restore.log" | grep -vc 'ERROR:  cannot drop inherited constraint "outbox_events_[012]_pkey" of relation "outbox_events_[012]"')" = 0 ] ||
		fail "pg_restore --clean into $1: $(cat "$H_DIR/restore.log")"
	echo "     pg_restore --clean: $errors errors, each 'cannot drop inherited constraint' of an outbox partition"
}
settle() { # settle <url> <what>: every outbox rebased, nothing unsent
	harness_wait_for 60 moves_settled "$1" || fail "$2: $(psql -XAtq "$1" -c "SELECT service, unsent, relay_state, last_error FROM chat_outbox.status")"
}

# A: some messages relayed, then a backlog with the relay stopped, and the dump
relay_at "$A" a
moves_send "$A" old 12 3 "$H_DIR/old.txt"
settle "$A" "A: relaying"
expect_eq "A: jobs in Redis before the move" 12 "$(moves_adds bull | grep -c '^added ')"
relay_stop
moves_send "$A" backlog 40 4 "$H_DIR/backlog.txt"
expect_eq "A: backlog unsent" 40 "$(relay_status unsent "$A")"
pg_dump -Fc -d "$A" -f "$H_DIR/chat.dump"
echo "ok   A: 12 messages relayed, 40 unsent, dumped by its owner"

# 1. another cluster
managed_cluster b
B=$CHAT
restore "$B"
expect_eq "B: outboxes from another database" 2 "$(moves_moved "$B")"
moves_refused "$B" "B"
moves_rotation_waits "$B" "B"
moves_sender_start "$B" new 20 5 "$H_DIR/b-new.txt"
relay_at "$B" b
moves_sender_wait
settle "$B" "B: the backlog"
expect_eq "B: rows its rebase sends again (its log)" 40 "$(moves_rebased "$H_DIR/pgdata-b.log")"
echo "     B: $(wc -l <"$H_DIR/b-new.txt.refused") sends refused before the rebase, then went through"
moves_verify "another cluster" bull "" "$H_DIR/old.txt" "$H_DIR/backlog.txt" "$H_DIR/b-new.txt"
relay_stop

# 2. pg_restore --clean into A itself: its own xids, nothing to rebase
restore_clean "$A"
expect_eq "A after --clean: outboxes from another database" 0 "$(moves_moved "$A")"
moves_send "$A" new 20 5 "$H_DIR/clean-new.txt" # the writers do not refuse (no relay runs)
relay_at "$A" clean --prefix clean
settle "$A" "A after --clean"
expect_eq "A after --clean: rebases logged" 0 "$(moves_rebase_lines "$H_DIR/postgres.log")"
moves_verify "pg_restore --clean into A" clean "$H_DIR/old.txt" "$H_DIR/backlog.txt" "$H_DIR/clean-new.txt"
relay_stop

# 3. the same cluster, another database
super "$PG_PORT" "CREATE DATABASE chat_copy OWNER chat_owner"
COPY=postgresql://chat_owner@127.0.0.1:$PG_PORT/chat_copy
restore "$COPY"
expect_eq "chat_copy: outboxes from another database" 2 "$(moves_moved "$COPY")"
moves_refused "$COPY" "chat_copy"
moves_sender_start "$COPY" new 20 5 "$H_DIR/copy-new.txt"
relay_at "$COPY" copy --prefix copy
moves_sender_wait
settle "$COPY" "chat_copy: the backlog"
expect_eq "chat_copy: rows its rebase sends again (the log)" 40 "$(moves_rebased "$H_DIR/postgres.log")"
moves_verify "the same cluster, another database" copy "$H_DIR/old.txt" "$H_DIR/backlog.txt" "$H_DIR/copy-new.txt"
relay_stop

# 4. logical replication, the cutover of tests/extension/moves.sh in managed terms: the install on S with
# no relay, the rows it seeds deleted (services and settings: P's come with the copy); P's relay stopped
# at the cutover; S's relay started after ALTER SUBSCRIPTION ... DISABLE and the sequences
managed_cluster p "wal_level = logical"
P_PORT=$CLUSTER_PORT
P=$CHAT
install "$P"
managed_cluster s
S_PORT=$CLUSTER_PORT
S=$CHAT
install "$S"
psql -XAtq -v ON_ERROR_STOP=1 "$S" -c "DELETE FROM chat_outbox.services" -c "DELETE FROM chat_outbox.settings"
relay_at "$P" p --prefix logical
moves_send "$P" old 6 3 "$H_DIR/logical-old.txt" # copied by the subscription
psql -XAtq -v ON_ERROR_STOP=1 "$P" -c "INSERT INTO workers.inbox (message_id, chat_id, body)
	SELECT gen_random_uuid(), 1, 'received on P ' || n FROM generate_series(1, 3) n" # what chat-outboxd writes
super "$P_PORT" "CREATE PUBLICATION chat_move FOR ALL TABLES" chat
psql -XAtq -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$S_PORT/chat" -c "SET client_min_messages = warning" \
	-c "CREATE SUBSCRIPTION chat_move CONNECTION 'host=127.0.0.1 port=$P_PORT dbname=chat user=postgres' PUBLICATION chat_move WITH (copy_data = true)"
moves_send "$P" old 6 3 "$H_DIR/logical-old.txt" # streamed
settle "$P" "P: relaying"
synced() { [ "$(super "$S_PORT" "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'" chat)" = 0 ]; }
harness_wait_for 60 synced || fail "S: tables not synced: $(super "$S_PORT" "SELECT srrelid::regclass, srsubstate FROM pg_subscription_rel WHERE srsubstate <> 'r'" chat)"
relay_stop
# P draws xids that do not replicate (S replays only P's writes, so its own xids would otherwise keep pace
# with P's, and a cursor judged by S's counter would happen to be right)
for _ in $(seq 300); do echo "SELECT pg_current_xact_id();"; done | psql -XAtq "$P" -f - >/dev/null
moves_send "$P" backlog 40 4 "$H_DIR/logical-backlog.txt"
# the cutover: nothing is written on P from here; S catches up
lsn=$(super "$P_PORT" "SELECT pg_current_wal_lsn()" chat)
caught_up() { [ "$(super "$P_PORT" "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name = 'chat_move'")" = t ]; }
harness_wait_for 60 caught_up || fail "S never caught up with P's $lsn"
expect_eq "S: messages replicated" 52 "$(psql -XAtq "$S" -c "SELECT count(*) FROM consumers.messages")"
expect_eq "S: outboxes from another database" 2 "$(moves_moved "$S")"
moves_refused "$S" "S while subscribed"
out=$(psql -XAtq -v ON_ERROR_STOP=1 -v VERBOSITY=verbose "$S" -c "SELECT chat_outbox.rebase_outbox('consumers')" 2>&1) &&
	fail "S: rebase_outbox went through with the subscription enabled: $out"
echo "$out" | grep '^ERROR:  55000: .* this database has an enabled subscription' >/dev/null || fail "S: rebase_outbox failed otherwise: $out"
echo "ok   S: rebase_outbox (as the owner) refused with 55000 while the subscription is enabled"
super "$S_PORT" "ALTER SUBSCRIPTION chat_move DISABLE" chat
moves_sync_sequences "$P" "$S"
moves_sender_start "$S" new 20 5 "$H_DIR/logical-new.txt"
relay_at "$S" s --prefix logical
moves_sender_wait
settle "$S" "S: the backlog"
expect_eq "S: rows its rebase sends again (its log)" 40 "$(moves_rebased "$H_DIR/pgdata-s.log")"
moves_verify "logical replication" logical "" "$H_DIR/logical-old.txt" "$H_DIR/logical-backlog.txt" "$H_DIR/logical-new.txt"
psql -XAtq -v ON_ERROR_STOP=1 "$S" -c "INSERT INTO workers.inbox (message_id, chat_id, body) VALUES (gen_random_uuid(), 1, 'received on S')"
expect_eq "S: the inbox's seq after the cutover" 4 "$(psql -XAtq "$S" -c "SELECT seq FROM workers.inbox WHERE body = 'received on S'")"
psql -XAtq -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$S_PORT/chat" -c "SET client_min_messages = warning" -c "DROP SUBSCRIPTION chat_move"
expect_eq "P: the subscription's slot dropped" 0 "$(super "$P_PORT" "SELECT count(*) FROM pg_replication_slots")"
relay_stop
