// daemon/src/consumer/core/inbox_sql.cpp - see inbox_sql.hpp.
#include "consumer/core/inbox_sql.hpp"

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
	// Every distinct message of the batch comes back, inserted or not, with its seq and a `new`
	// flag: after a write whose outcome was unknown (connection lost at COMMIT) the consumer must
	// still push the rows its lost attempt committed. An existing row is read from the inbox
	// (the statement's snapshot does not see what `ins` adds, so the two never overlap).
	//
	// Clients resume from a seq, so seqs must be handed out in commit order: a row that commits
	// after a higher seq was pushed would be skipped by every resuming client. One transaction-scoped
	// advisory lock per inbox, taken before any seq is drawn and held to COMMIT, serializes writers:
	// a daemon restarted while its predecessor's last INSERT still runs in Postgres, or a second
	// daemon for the same service, waits instead of interleaving.
	const std::string inbox = QuoteIdent(service) + ".inbox";
	std::string lock_key = "chat_outbox.inbox:";
	for (char c : service)
		lock_key += c == '\'' ? std::string("''") : std::string(1, c);
	return "WITH input AS ("
	       " SELECT DISTINCT ON (message_id) * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::timestamptz[])"
	       " WITH ORDINALITY AS t(message_id, chat_id, body, created_at, ord)"
	       " WHERE (SELECT pg_advisory_xact_lock(hashtext('" +
	       lock_key +
	       "'))) IS NOT NULL"
	       " ORDER BY message_id, ord"
	       "), ins AS ("
	       " INSERT INTO " +
	       inbox +
	       " (message_id, chat_id, body, created_at)"
	       " SELECT message_id, chat_id, body, created_at FROM input ORDER BY ord"
	       " ON CONFLICT (message_id) DO NOTHING"
	       " RETURNING message_id, seq"
	       ") SELECT i.message_id::text, coalesce(ins.seq, e.seq) AS seq, coalesce(e.chat_id, i.chat_id),"
	       " coalesce(e.body, i.body), to_json(coalesce(e.created_at, i.created_at)) #>> '{}',"
	       " extract(epoch FROM coalesce(e.created_at, i.created_at))::float8, ins.seq IS NOT NULL"
	       " FROM input i LEFT JOIN ins ON ins.message_id = i.message_id"
	       " LEFT JOIN " +
	       inbox +
	       " e ON e.message_id = i.message_id AND ins.message_id IS NULL"
	       " ORDER BY seq";
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
