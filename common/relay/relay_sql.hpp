// common/relay/relay_sql.hpp - the relay's statements, shared by the in-database relay
// (extension/src/pg/relay_pass.cpp, through SPI) and the external relay (relay/, through libpq).
//
// Each is a printf format whose every %s is the service's schema, already quoted as an identifier;
// $n are the statement's parameters. One text for both relays, so they read windows, refuse, rotate
// and purge the same way (docs/extension.md, 'How the relay works').
#pragma once

namespace chat_outbox::relay_sql {

// The next batch of a service's outbox: the rows of the relay's windows (chat_outbox.relay_batch,
// sql/parts/outbox.sql), the cursors moved past them in the pass's transaction. $1 text the
// service, $2 int4 batch size, $3 int4 the partition count the relay relays under (0: the count its
// cursors have) and $4 int4[] partitions under that count whose rows are left for later: those on a
// Redis shard that is down (their cursors stay). A chat's rows are all in one partition, so leaving
// some out never lets a chat's later row pass an earlier one. The rows are written once and never
// updated: what is sent is the cursors'. A second relay waits for the first on the service's row
// of chat_outbox.services, then starts where the first ended. The rows come in id order within each group of
// partitions; the caller sorts them by id. The last column is the row's chat_id as text (NULL when
// its payload has no integer chat_id; common/partitions.hpp, ChatIdOfJson, reads it).
constexpr const char kClaim[] =
    "SELECT id, event, payload::pg_catalog.text, payload OPERATOR(pg_catalog.->>) 'id', chat_id::pg_catalog.text "
    "FROM chat_outbox.relay_batch($1, $2, $3, $4::pg_catalog.int4[])";

// The relays' marks (docs/architecture.md, 'What Redis kept: the marks'; chat_outbox.relay_marks and
// relay_rewind, sql/parts/outbox.sql; when they are read, common/relay/mark_watch.hpp). kMarks, after
// a batch is read: per partition of it ($3 int4[], under the count $2 int4 the pass relays under; $1
// text the service), what its call expects the mark to be (NULL: none) and the mark it writes.
// kCursorCount: the count the service's cursors are under (NULL: none yet, or no outbox: the pass's read
// then says why, before Redis is asked anything for a service that cannot be relayed). kRewind: before a pass's
// first batch, the marks Redis holds ($2 int4[] the partitions, $3 text[] their marks, NULL for none)
// move back the cursors whose rows Redis lost; one row per cursor moved back, with how many rows go
// again. kHasMarks: whether the installed SQL has them (1.6 on).
constexpr const char kMarks[] =
    "SELECT partition, expect, mark FROM chat_outbox.relay_marks($1, $2, $3::pg_catalog.int4[])";
constexpr const char kCursorCount[] =
    "SELECT CASE WHEN pg_catalog.to_regclass(pg_catalog.quote_ident($1) OPERATOR(pg_catalog.||) '.outbox_events') IS NOT NULL "
    "THEN max(partitions) END FROM chat_outbox.outbox_cursors WHERE service OPERATOR(pg_catalog.=) $1";
constexpr const char kRewind[] =
    "SELECT partition, resent FROM chat_outbox.relay_rewind($1, $2::pg_catalog.int4[], $3::pg_catalog.text[])";
constexpr const char kHasMarks[] =
    "SELECT pg_catalog.to_regprocedure('chat_outbox.relay_marks(text, integer, integer[])') IS NOT NULL";

// The service's partition count ($1 text: the service), read in the pass's transaction after its
// first claim: a relay that claimed rows reads a count at least as new as the one any relay before
// it relayed under (their claims wait for each other), which keeps a layout change in order.
constexpr const char kWantedPartitions[] =
    "SELECT partitions FROM chat_outbox.services WHERE name OPERATOR(pg_catalog.=) $1";

// A row Redis could not take is recorded as refused, with the reason ($2 text): the windows leave
// it out from then on, and the status view counts it.
constexpr const char kRefuse[] =
    "INSERT INTO %s.outbox_refused (id, gen, reason) SELECT e.id, e.gen, $2 FROM %s.outbox_events e "
    "WHERE e.id OPERATOR(pg_catalog.=) $1 ON CONFLICT (id) DO UPDATE SET reason = EXCLUDED.reason";

// One step of the rotation of a service's outbox ($1 text the service, $2 int4 the retention in
// seconds, 0: never rotate): truncates the oldest generation once every cursor is past it, switches
// generations once the current one is older than the retention; answers what the truncate waits for
// (NULL: nothing). Sent rows are never deleted one by one.
constexpr const char kRotate[] = "SELECT chat_outbox.outbox_rotate($1, $2)";

// Deletes, among the $2 (int4) oldest inbox rows by seq (its unique index), those received more
// than $1 (int4) seconds ago: the work of one round is bounded by $2 rows, not by the rows younger
// than the retention.
constexpr const char kPurgeInbox[] =
    "DELETE FROM %s.inbox WHERE seq OPERATOR(pg_catalog.=) ANY (ARRAY("
    "SELECT seq FROM (SELECT seq, received_at FROM %s.inbox ORDER BY seq LIMIT $2) oldest "
    "WHERE received_at OPERATOR(pg_catalog.<) "
    "(pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => $1))))";

// The planner settings the batches and the purge run with: they make them walk the indexes in id
// order (and the xid index for a window's late rows) whatever the statistics say. A backlog built
// faster than autovacuum analyzes looks tiny to the planner, which then sorts the whole backlog.
// jit off: the disabled paths' cost penalty would push every plan past jit_above_cost, and
// compiling a batch's statements took 300 ms of a 1 ms batch.
constexpr const char *const kPlannerSettings[][2] = {{"enable_sort", "off"},
                                                     {"enable_seqscan", "off"},
                                                     {"enable_bitmapscan", "off"},
                                                     {"plan_cache_mode", "force_generic_plan"},
                                                     {"jit", "off"}};

// A service whose outbox is still 1.1's (a table with sent_at: the relay runs before ALTER EXTENSION
// UPDATE or the managed update_1.2.sql) is relayed the 1.1 way until its update, so that deploying a
// relay of 1.2 first stops nothing. $1 text the service; true while its outbox is 1.1's.
// (1.1's outbox is a table, 1.2's a view; a service without either takes the 1.2 way and fails there)
constexpr const char kOutboxBefore12[] =
    "SELECT COALESCE((SELECT c.relkind OPERATOR(pg_catalog.=) 'r' FROM pg_catalog.pg_class c "
    "WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(pg_catalog.quote_ident($1) OPERATOR(pg_catalog.||) '.outbox')), false)";

namespace before_1_2 {

// Claims and marks the next batch in one statement: $1 int4 batch size, $2 int8 the last id of the
// pass's previous batch (or the lowest bigint), $3 int4 a partition count and $4 int4[] partitions
// whose rows are left unclaimed. Every claim of a pass reads with the pass's first snapshot (the
// extension: SPI_execute_snapshot; chat-outbox-relay: REPEATABLE READ), so a late commit waits for the
// next pass. Against a 1.2 outbox (a view) it fails, and the relay looks again which outbox it has.
constexpr const char kClaim[] =
    "UPDATE %s.outbox SET sent_at = pg_catalog.now() "
    "WHERE sent_at IS NULL AND id OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT id FROM %s.outbox "
    "WHERE sent_at IS NULL AND refused IS NULL AND id OPERATOR(pg_catalog.>) $2 "
    "AND (pg_catalog.cardinality($4::pg_catalog.int4[]) OPERATOR(pg_catalog.=) 0 "
    "OR chat_outbox.chat_partition(payload, $3::pg_catalog.int4) OPERATOR(pg_catalog.<>) ALL ($4::pg_catalog.int4[])) "
    "ORDER BY id LIMIT $1 FOR UPDATE)) "
    "RETURNING id, event, payload::pg_catalog.text, payload OPERATOR(pg_catalog.->>) 'id', "
    "CASE WHEN pg_catalog.jsonb_typeof(payload OPERATOR(pg_catalog.->) 'chat_id') OPERATOR(pg_catalog.=) 'number' "
    "THEN payload OPERATOR(pg_catalog.->>) 'chat_id' END";

// A row Redis could not take goes back to unsent, with the reason ($2 text), and is not claimed again.
constexpr const char kRefuse[] = "UPDATE %s.outbox SET sent_at = NULL, refused = $2 WHERE id OPERATOR(pg_catalog.=) $1";

// Deletes, among the $2 (int4) oldest rows by id, those sent more than $1 (int4) seconds ago.
constexpr const char kPurgeSent[] =
    "DELETE FROM %s.outbox WHERE id OPERATOR(pg_catalog.=) ANY (ARRAY("
    "SELECT id FROM (SELECT id, sent_at FROM %s.outbox ORDER BY id LIMIT $2) oldest "
    "WHERE sent_at OPERATOR(pg_catalog.<) "
    "(pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => $1))))";

} // namespace before_1_2

} // namespace chat_outbox::relay_sql
