// daemon/src/inbox/core/inbox_row.cpp - see inbox_row.hpp.
#include "inbox/core/inbox_row.hpp"

#include <cerrno>
#include <cstdlib>

namespace chat_outboxd {

std::string
SenderColumn(bool with_sender)
{
	return with_sender ? "sender" : "NULL::pg_catalog.text AS sender";
}

std::string
InboxRowColumns(bool with_sender)
{
	return std::string("seq, message_id, chat_id, body, ") + kCreatedAtSql + ", " + SenderColumn(with_sender);
}

bool
ReadInt64(const std::optional<std::string> &v, int64_t *out)
{
	if (!v || v->empty())
		return false;
	char *end = nullptr;
	errno = 0;
	long long n = std::strtoll(v->c_str(), &end, 10);
	if (*end != '\0' || errno == ERANGE)
		return false;
	*out = n;
	return true;
}

bool
ReadInboxRow(PgRow &row, InboxMessage *out)
{
	InboxMessage m;
	if (row.size() < kInboxRowColumns || !ReadInt64(row[0], &m.seq) || !row[1] || !ReadInt64(row[2], &m.chat_id) ||
	    !row[3])
		return false;
	m.id = std::move(*row[1]);
	m.body = std::move(*row[3]);
	m.created_at = row[4] ? std::move(*row[4]) : std::string();
	m.sender = std::move(row[5]);
	*out = std::move(m);
	return true;
}

} // namespace chat_outboxd
