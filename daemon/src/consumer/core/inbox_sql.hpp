// daemon/src/consumer/core/inbox_sql.hpp - the one statement that writes a batch into <service>.inbox.
//
// A batch is sent as four parallel arrays (text format) and inserted WITH ORDINALITY in that
// order, so `seq` follows queue order; ON CONFLICT DO NOTHING + RETURNING tells which ids were new.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "consumer/core/job_message.hpp"

namespace chat_outboxd {

// InboxInsertSql returns the statement for schema `service`; its rows are
// (message_id, seq, chat_id, body, created_at ISO 8601 or NULL, created_at epoch seconds or NULL), by seq.
std::string InboxInsertSql(const std::string &service);

// InboxInsertParams returns $1..$4: uuid[], bigint[], text[], timestamptz[] literals.
std::vector<std::optional<std::string>> InboxInsertParams(const std::vector<ChatMessage> &messages);

// PgArrayLiteral renders a one-dimensional Postgres array in text form; nullopt elements are NULL.
std::string PgArrayLiteral(const std::vector<std::optional<std::string>> &items);

std::string QuoteIdent(const std::string &name);

} // namespace chat_outboxd
