// daemon/src/inbox/core/inbox_sql.hpp - the statements that write a batch into <service>.inbox, and
// the reading of their result.
//
// One write is one transaction of three statements on the inbox connection, sent as one pipeline
// (one Sync: the server commits at the end, or rolls all back):
//   SELECT <the write's settings and values>; then, once the server has answered it,
//   SELECT <the inbox lock>; <the insert>
// The lock is an advisory lock per inbox, held to the commit, so seqs are handed out in commit order
// (clients resume from a seq: a row committing below an already-pushed seq would be skipped by
// every resuming client). It is taken in its own statement because a statement's snapshot is taken
// when the statement starts: the insert, started after the lock wait, sees every row the writer
// before it committed, in READ COMMITTED.
// The lock is never held waiting on a daemon that stopped (frozen, a paused VM): the batch's values,
// megabytes maybe, go first, staged in settings local to the transaction (InboxStageSql), and the
// lock and the insert are sent only when the server has read them (PgStatement::after_answers): a
// few hundred bytes in one write, so the server never holds the lock waiting for more of the write.
// A result the daemon stops reading is bounded by tcp_user_timeout (--inbox-stall-timeout, over
// TCP): the server drops the connection and the write rolls back, to be written again. The values
// are parameters, never spliced into the text: a failed statement's text reaches the server's log,
// the values do not.
//
// A batch is sent as parallel arrays (text format) and inserted WITH ORDINALITY in that order,
// so `seq` follows queue order; ON CONFLICT DO NOTHING + RETURNING tells which ids were new.
//
// Every function and operator is qualified with pg_catalog, and type names too, so objects a role
// can create in a schema on the search_path are never called.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inbox/core/delivery.hpp"
#include "inbox/core/inbox_row.hpp"

namespace chat_outboxd {

// kInboxValues: the values of one write (InboxInsertParams).
constexpr int kInboxValues = 11;

// InboxStageSql: the first statement of every write, its settings and values (local to its
// transaction: nothing is left on the connection, which a transaction-pooling PgBouncer may hand
// to another client next). $1 is --inbox-stall-timeout in ms, $2.. the values (InboxStageParams).
// - enable_seqscan off: the plans walk the inbox's indexes whatever the statistics say. An inbox
//   vacuumed while empty looks like a table of no pages, and a plan made then (the insert's, and the
//   inbox_apply trigger's lookup, which runs once per row) would scan the whole inbox for every row
//   until the next analyze. Every lookup these statements make has an index.
// - plan_cache_mode force_generic_plan: the insert is planned once per connection, not at every write.
//   Its custom plans never look cheaper than the generic one to the plan cache's test, so each batch
//   would be planned again (about half a millisecond a batch); its generic plan joins the batch to
//   what it inserted by hash and probes the inbox by index, whatever the batch's size.
// - tcp_user_timeout: how long the server's unacknowledged output may wait for this daemon (above).
// - value n as the placeholder setting InboxStagedName(n), which the insert reads.
std::string InboxStageSql();
std::string InboxStagedName(int n);
std::vector<std::optional<std::string>> InboxStageParams(int64_t stall_timeout_ms,
                                                         std::vector<std::optional<std::string>> &&values);

// InboxLockSql takes the inbox's advisory lock; its one parameter is InboxLockKey(service).
std::string InboxLockSql();
std::string InboxLockKey(const std::string &service);

// InboxSenderColumnSql: whether table $1 (a quoted name, "svc".inbox) has the columns `sender` and
// `target` (chat_outbox 1.1), true or false in one row and column (false also when the table does not exist).
std::string InboxSenderColumnSql();

// InboxHighWaterSql returns the inbox's highest seq (0 when empty), in one row and column.
std::string InboxHighWaterSql(const std::string &service);

// InboxInsertSql returns the insert for schema `service`, which reads the values InboxStageSql
// staged. Its result has the columns of
// InboxColumn, ordered by seq: every distinct message of the batch, new or already there, and every
// row another writer committed above value 5 (the highest seq already pushed; NULL: none).
// with_sender: the inbox has `sender` and the edit columns (chat_outbox 1.1, inbox_schema.hpp); without
// them the senders (value 6) are not stored, every row's sender reads NULL, and edits and deletes are not
// stored (their rows come back without a seq: the write fails, and is retried).
// The inbox_apply trigger may change what a row stores (an edit that came before its message): the
// result reads an inserted row as the insert returned it.
std::string InboxInsertSql(const std::string &service, bool with_sender);

// The result columns of InboxInsertSql, in its SELECT order (InboxInsertSql builds its SELECT list
// from the same table, so the two cannot drift apart). The first ones are an inbox row as
// ReadInboxRow reads it.
enum InboxColumn : size_t {
	kInboxSeq,          // seq
	kInboxId,           // message_id as text
	kInboxChatId,       // chat_id
	kInboxBody,         // body
	kInboxCreatedIso,   // created_at, ISO 8601 as JSON prints it, or NULL
	kInboxSender,       // sender, or NULL
	kInboxTarget,       // an edit's or delete's message id as text, or NULL
	kInboxChange,       // 'edited', 'deleted', or NULL for a message
	kInboxEditedAt,     // edited_at as ISO 8601, or NULL
	kInboxDeletedAt,    // deleted_at as ISO 8601, or NULL
	kInboxCreatedEpoch, // created_at as epoch seconds, or NULL
	kInboxKind,         // InboxRowKind as one letter
	kInboxColumnCount
};
static_assert(kInboxSeq == 0 && kInboxId == 1 && kInboxChatId == 2 && kInboxBody == 3 && kInboxCreatedIso == 4 &&
                  kInboxSender == 5 && kInboxTarget == 6 && kInboxChange == 7 && kInboxEditedAt == 8 &&
                  kInboxDeletedAt == 9 &&
                  kInboxKind >= kInboxRowColumns,
              "a result row starts with an inbox row as ReadInboxRow reads it");

// InboxRowKind says why a row is in the result.
enum class InboxRowKind : char {
	Inserted = 'n', // written by this statement
	Existing = 'e', // a message of the batch that was already in the inbox
	Other = 'o',    // not in the batch: another writer committed it above the highest pushed seq
};

// InboxOthersPerWrite is the most rows of other writers one write returns, InboxOthersBytesPerWrite
// about the most body bytes (the row that crosses it is the last); the rest come with the next write.
int InboxOthersPerWrite();
int64_t InboxOthersBytesPerWrite();

// InboxInsertParams returns the kInboxValues values: uuid[], bigint[], text[], timestamptz[] literals, the highest
// seq already pushed (nullopt: unknown, no other writers' rows are returned), the senders' text[],
// and the changes': targets uuid[], kinds text[], versions int[], edited_at and deleted_at timestamptz[].
std::vector<std::optional<std::string>> InboxInsertParams(const std::vector<ChatMessage> &messages,
                                                          std::optional<int64_t> pushed_up_to);

// InboxRows is the result of one write, each list in seq order.
struct InboxRows {
	std::vector<InboxMessage> inserted;         // new rows
	std::vector<std::optional<double>> created; // parallel to inserted: created_at as epoch seconds
	std::vector<InboxMessage> existing;         // messages of the batch that were already there
	std::vector<InboxMessage> others;           // rows of other writers above the highest pushed seq
	// Set when `others` reached a bound of one write: rows above this seq were not all read.
	std::optional<int64_t> read_up_to;

	// Add appends another write's rows (a batch written one message at a time).
	void Add(InboxRows &&more);
};

using PgRows = std::vector<PgRow>;

// ParseInboxRows reads InboxInsertSql's result; false with *error on a row it cannot read.
bool ParseInboxRows(PgRows &&rows, InboxRows *out, std::string *error);

// InboxRowRefused: SQLSTATE classes that judge a row's content (data exception 22, integrity
// constraint 23, a raise in a trigger P0), as opposed to the statement or the server (permissions, a
// missing table, shutdown): only the former are worth isolating, the latter hold the batch until they clear.
bool InboxRowRefused(const std::string &sqlstate);
// InboxDataException: class 22. Validation leaves only created_at for Postgres to reject that way.
bool InboxDataException(const std::string &sqlstate);

// PgArrayLiteral renders a one-dimensional Postgres array in text form; nullopt elements are NULL.
std::string PgArrayLiteral(const std::vector<std::optional<std::string>> &items);

std::string QuoteIdent(const std::string &name);

} // namespace chat_outboxd
