// daemon/src/inbox/core/inbox_row.hpp - an inbox row as the daemon reads it: the columns to select and
// their decoding into an InboxMessage, one spelling for every reader (the inbox write's result, the
// bus's fills, catch-up), so a row reads the same whichever way it came.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inbox/core/delivery.hpp"

namespace chat_outboxd {

// kCreatedAtSql selects a row's created_at as ISO 8601 text (to_json), the text the outbox payload
// carries, so a message's created_at reads the same live, replayed and in a send's ack. Schema-qualified:
// the connection's search_path decides nothing.
constexpr const char *kCreatedAtSql = "pg_catalog.to_json(created_at) OPERATOR(pg_catalog.#>>) '{}'";

// InboxRowColumns is the select list of an inbox row, in the order ReadInboxRow reads it:
// seq, message_id, chat_id, body, created_at (as kCreatedAtSql), sender, target, kind, edited_at,
// deleted_at (the last five NULL without the 1.1 columns: with_sender false, inbox_schema.hpp).
// Further columns may follow.
std::string InboxRowColumns(bool with_sender);
// EditColumns is the last four of them: `target, kind, edited_at, deleted_at` as InboxRowColumns
// selects them, or NULLs when the table has none.
std::string EditColumns(bool with_sender);

// SenderColumn is `sender`, or a NULL in its place when the table has none (chat_outbox 1.0).
std::string SenderColumn(bool with_sender);
constexpr size_t kInboxRowColumns = 10;

using PgRow = std::vector<std::optional<std::string>>;

// ReadInboxRow moves the row's first kInboxRowColumns columns into *out; false when the row is
// shorter, or seq, message_id, chat_id or body is NULL or not what Postgres prints for its type
// (a NULL created_at, edited_at or deleted_at reads as empty, a NULL sender as none), or kind is not
// NULL, 'edited' or 'deleted'.
bool ReadInboxRow(PgRow &row, InboxMessage *out);

// ReadInt64 reads a bigint as Postgres prints it in text format.
bool ReadInt64(const std::optional<std::string> &v, int64_t *out);

} // namespace chat_outboxd
