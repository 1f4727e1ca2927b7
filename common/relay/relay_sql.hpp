// common/relay/relay_sql.hpp - the relay's statements, shared by the in-database relay
// (extension/src/pg/relay_pass.cpp, through SPI) and the external relay (relay/, through libpq).
//
// Each is a printf format whose every %s is the service's schema, already quoted as an identifier;
// $n are the statement's parameters. One text for both relays, so they claim, mark, refuse and
// purge the same way (docs/extension.md, 'How the relay works').
#pragma once

namespace chat_outbox::relay_sql {

// Claims and marks the next batch in one statement: $1 int4 batch size, $2 int8 the last id of the
// pass's previous batch (or the lowest bigint), $3 int4 a partition count and $4 int4[] partitions
// (under that count, chat_outbox.chat_partition) whose rows are left unclaimed: those on a Redis
// shard that is down. With $4 empty the partition is not computed at all. A chat's rows are all in
// one partition, so leaving some out never lets a chat's later row pass an earlier one. Plain FOR UPDATE, not SKIP LOCKED: a second relay
// waits for the first instead of sending later rows ahead of earlier ones. id = ANY(ARRAY(subquery)),
// not id IN (subquery): the locking subquery becomes an InitPlan that runs exactly once, and the
// update is one index scan over exactly those ids. RETURNING follows the update's order, not the ids':
// the caller sorts the rows by id. The last column is the text of the payload's chat_id when it is
// a JSON number (common/partitions.hpp, ChatIdOfJson, reads it), else NULL.
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

// The service's partition count ($1 text: the service), read in the pass's transaction after its
// first claim: a relay that claimed rows reads a count at least as new as the one any relay before
// it relayed under (their claims wait for each other), which keeps a layout change in order.
constexpr const char kWantedPartitions[] =
	"SELECT partitions FROM chat_outbox.services WHERE name OPERATOR(pg_catalog.=) $1";

// A row Redis could not take goes back to unsent, with the reason ($2 text), and is not claimed again.
constexpr const char kRefuse[] = "UPDATE %s.outbox SET sent_at = NULL, refused = $2 WHERE id OPERATOR(pg_catalog.=) $1";

// Deletes, among the $2 (int4) oldest rows by id, those sent more than $1 (int4) seconds ago: the
// work of one round is bounded by $2 rows, not by the rows younger than the retention.
constexpr const char kPurgeSent[] =
	"DELETE FROM %s.outbox WHERE id OPERATOR(pg_catalog.=) ANY (ARRAY("
	"SELECT id FROM (SELECT id, sent_at FROM %s.outbox ORDER BY id LIMIT $2) oldest "
	"WHERE sent_at OPERATOR(pg_catalog.<) "
	"(pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => $1))))";

// The inbox the same way, by seq (its unique index).
constexpr const char kPurgeInbox[] =
	"DELETE FROM %s.inbox WHERE seq OPERATOR(pg_catalog.=) ANY (ARRAY("
	"SELECT seq FROM (SELECT seq, received_at FROM %s.inbox ORDER BY seq LIMIT $2) oldest "
	"WHERE received_at OPERATOR(pg_catalog.<) "
	"(pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => $1))))";

// The planner settings the claim and the purges run with: they make them walk the partial index
// in id order whatever the statistics say. A backlog built faster than autovacuum analyzes looks
// tiny to the planner, which then sorts the whole backlog for every batch.
constexpr const char *const kPlannerSettings[][2] = {{"enable_sort", "off"},
													 {"enable_seqscan", "off"},
													 {"enable_bitmapscan", "off"},
													 {"plan_cache_mode", "force_generic_plan"}};

} // namespace chat_outbox::relay_sql
