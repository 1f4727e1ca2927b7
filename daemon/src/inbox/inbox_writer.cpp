// daemon/src/inbox/inbox_writer.cpp - see inbox_writer.hpp.
#include "inbox/inbox_writer.hpp"

#include <cstdlib>
#include <memory>

namespace chat_outboxd {

InboxWriter::InboxWriter(PgClient &pg, const std::string &service)
    : pg_(pg), service_(service), schema_(pg, service),
      insert_sql_{InboxInsertSql(service, false), InboxInsertSql(service, true)}
{
}

void
InboxWriter::Write(const std::vector<ChatMessage> &messages, std::optional<int64_t> pushed_up_to,
                   std::function<void(InboxWriteResult &&)> done)
{
	schema_.SawSenders(messages);
	schema_.Ready([this, params = InboxInsertParams(messages, pushed_up_to), done = std::move(done)]() mutable {
		WriteAs(schema_.HasSender(), std::move(params), std::move(done));
	});
}

void
InboxWriter::WriteAs(bool with_sender, PgParams params, std::function<void(InboxWriteResult &&)> done)
{
	// The four statements are queued together, so nothing else runs on the connection between them;
	// the first failure is the write's error (the ones after it report the aborted transaction).
	auto out = std::make_shared<InboxWriteResult>();
	out->ok = true;
	auto note = [out](const PgResult &r) {
		out->connection_lost = out->connection_lost || r.connection_lost;
		if (r.ok || !out->ok)
			return;
		out->ok = false;
		out->error = r.error;
		out->sqlstate = r.sqlstate;
	};
	auto rows = std::make_shared<PgRows>();
	pg_.Query("BEGIN", {}, [note](PgResult &&r) { note(r); });
	pg_.QueryPrepared("chat_outboxd_inbox_lock", InboxLockSql(), {InboxLockKey(service_)},
	                  [note](PgResult &&r) { note(r); });
	// Two statements, one per schema version: a prepared statement keeps the text it was prepared with.
	pg_.QueryPrepared(with_sender ? "chat_outboxd_inbox_insert" : "chat_outboxd_inbox_insert_1_0",
	                  insert_sql_[with_sender], std::move(params), [note, rows, check = schema_.Checker()](PgResult &&r) {
		                  check(r);
		                  note(r);
		                  *rows = std::move(r.rows);
	                  });
	pg_.Query("COMMIT", {}, [note, out, rows, done = std::move(done)](PgResult &&r) {
		note(r);
		// A row without a seq is one the insert could not see: a writer that skips the lock committed it
		// during the insert. The write is reported failed and retried; the retry reads every row back.
		if (out->ok && !ParseInboxRows(std::move(*rows), out.get(), &out->error))
			out->ok = false;
		done(std::move(*out));
	});
}

void
InboxWriter::ReadHighWater(std::function<void(std::optional<int64_t>)> done)
{
	pg_.Query(InboxHighWaterSql(service_), {}, [done = std::move(done)](PgResult &&r) {
		if (!r.ok || r.rows.size() != 1 || r.rows[0].size() != 1 || !r.rows[0][0]) {
			done(std::nullopt);
			return;
		}
		done(std::strtoll(r.rows[0][0]->c_str(), nullptr, 10));
	});
}

} // namespace chat_outboxd
