// daemon/src/core/inbox_sql.cpp - see inbox_sql.hpp.
#include "core/inbox_sql.hpp"

namespace chat_outboxd {

std::string
QuoteIdent(const std::string &name)
{
	std::string out = "\"";
	for (char c : name) {
		if (c == '"')
			out += "\"\"";
		else
			out.push_back(c);
	}
	return out + "\"";
}

std::string
PgArrayLiteral(const std::vector<std::optional<std::string>> &items)
{
	std::string out = "{";
	for (size_t i = 0; i < items.size(); i++) {
		if (i)
			out.push_back(',');
		if (!items[i]) {
			out += "NULL";
			continue;
		}
		// Always quoted, so "NULL", empty strings, commas and braces in bodies stay plain text.
		out.push_back('"');
		for (char c : *items[i]) {
			if (c == '"' || c == '\\')
				out.push_back('\\');
			out.push_back(c);
		}
		out.push_back('"');
	}
	return out + "}";
}

std::string
InboxInsertSql(const std::string &service)
{
	return "WITH input AS ("
	       " SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::timestamptz[])"
	       " WITH ORDINALITY AS t(message_id, chat_id, body, created_at, ord)"
	       "), ins AS ("
	       " INSERT INTO " +
	       QuoteIdent(service) +
	       ".inbox (message_id, chat_id, body, created_at)"
	       " SELECT message_id, chat_id, body, created_at FROM input ORDER BY ord"
	       " ON CONFLICT (message_id) DO NOTHING"
	       " RETURNING message_id, seq, chat_id, body, created_at"
	       ") SELECT message_id::text, seq, chat_id, body, to_json(created_at) #>> '{}',"
	       " extract(epoch FROM created_at)::float8 FROM ins ORDER BY seq";
}

std::vector<std::optional<std::string>>
InboxInsertParams(const std::vector<ChatMessage> &messages)
{
	std::vector<std::optional<std::string>> ids, chats, bodies, created;
	for (const auto &m : messages) {
		ids.emplace_back(m.id);
		chats.emplace_back(std::to_string(m.chat_id));
		bodies.emplace_back(m.body);
		created.push_back(m.created_at);
	}
	return {PgArrayLiteral(ids), PgArrayLiteral(chats), PgArrayLiteral(bodies), PgArrayLiteral(created)};
}

} // namespace chat_outboxd
