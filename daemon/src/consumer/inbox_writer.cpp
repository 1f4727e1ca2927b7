// daemon/src/consumer/inbox_writer.cpp - see inbox_writer.hpp.
#include "consumer/inbox_writer.hpp"

#include <cstdlib>

#include "consumer/core/inbox_sql.hpp"

namespace chat_outboxd {

InboxWriter::InboxWriter(PgClient &pg, const std::string &service) : pg_(pg), sql_(InboxInsertSql(service)) {}

void
InboxWriter::Write(const std::vector<ChatMessage> &messages, std::function<void(InboxWriteResult &&)> done)
{
	pg_.QueryPrepared("chat_outboxd_inbox_insert", sql_, InboxInsertParams(messages), [done = std::move(done)](PgResult &&r) {
		InboxWriteResult out;
		out.ok = r.ok;
		out.connection_lost = r.connection_lost;
		out.error = r.error;
		out.sqlstate = r.sqlstate;
		if (r.ok) {
			for (auto &row : r.rows) {
				if (row.size() < 7 || !row[0] || !row[1] || !row[2] || !row[3] || !row[6]) {
					out.ok = false;
					out.error = "inbox insert returned a malformed row";
					break;
				}
				InboxMessage m;
				m.id = *row[0];
				m.seq = std::strtoll(row[1]->c_str(), nullptr, 10);
				m.chat_id = std::strtoll(row[2]->c_str(), nullptr, 10);
				m.body = std::move(*row[3]);
				m.created_at = row[4] ? *row[4] : "";
				if (*row[6] != "t") {
					out.existing.push_back(std::move(m));
					continue;
				}
				out.inserted.push_back(std::move(m));
				out.created.push_back(row[5] ? std::optional<double>(std::strtod(row[5]->c_str(), nullptr))
				                             : std::nullopt);
			}
		}
		done(std::move(out));
	});
}

} // namespace chat_outboxd
