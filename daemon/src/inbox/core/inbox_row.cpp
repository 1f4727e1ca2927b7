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
EditColumns(bool with_sender)
{
	if (!with_sender)
		return "NULL::pg_catalog.text AS target, NULL::pg_catalog.text AS kind, NULL::pg_catalog.text AS edited_at, "
		       "NULL::pg_catalog.text AS deleted_at";
	return "target::pg_catalog.text, kind, pg_catalog.to_json(edited_at) OPERATOR(pg_catalog.#>>) '{}', "
	       "pg_catalog.to_json(deleted_at) OPERATOR(pg_catalog.#>>) '{}'";
}

std::string
InboxRowColumns(bool with_sender)
{
	return std::string("seq, message_id, chat_id, body, ") + kCreatedAtSql + ", " + SenderColumn(with_sender) + ", " +
	       EditColumns(with_sender);
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
	if (row[7]) {
		if (*row[7] == "edited")
			m.change = Change::Edited;
		else if (*row[7] == "deleted")
			m.change = Change::Deleted;
		else
			return false;
		if (!row[6])
			return false;
		m.target = std::move(*row[6]);
	}
	m.edited_at = row[8] ? std::move(*row[8]) : std::string();
	m.deleted_at = row[9] ? std::move(*row[9]) : std::string();
	*out = std::move(m);
	return true;
}

} // namespace chat_outboxd
