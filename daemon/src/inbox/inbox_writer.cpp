// daemon/src/inbox/inbox_writer.cpp - see inbox_writer.hpp.
#include "inbox/inbox_writer.hpp"

#include <cstdlib>

namespace chat_outboxd {

InboxWriter::InboxWriter(PgClient &pg, const std::string &service, int64_t stall_timeout_ms)
    : pg_(pg), service_(service), stall_timeout_ms_(stall_timeout_ms), schema_(pg, service),
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
	// The values, the lock and the insert go out as one pipeline: one transaction committed at its Sync,
	// so the lock is held for the insert and the commit only, never across a round trip of ours. The
	// lock and the insert wait for the answer to the values (core/inbox_sql.hpp: the bound on the
	// lock). Two inserts, one per schema version: a prepared statement keeps the text it was prepared
	// with.
	std::vector<PgStatement> statements{
	    {"chat_outboxd_inbox_stage", InboxStageSql(), InboxStageParams(stall_timeout_ms_, std::move(params))},
	    {"chat_outboxd_inbox_lock", InboxLockSql(), {InboxLockKey(service_)}, true},
	    {with_sender ? "chat_outboxd_inbox_insert" : "chat_outboxd_inbox_insert_1_0", insert_sql_[with_sender], {}}};
	pg_.Pipeline(std::move(statements), [check = schema_.Checker(), done = std::move(done)](PgResult &&r) {
		check(r);
		InboxWriteResult out;
		out.ok = r.ok;
		out.connection_lost = r.connection_lost;
		out.error = r.error;
		out.sqlstate = r.sqlstate;
		// A row without a seq is one the insert could not see: a writer that skips the lock committed it
		// during the insert. The write is reported failed and retried; the retry reads every row back.
		if (out.ok && !ParseInboxRows(std::move(r.rows), &out, &out.error))
			out.ok = false;
		done(std::move(out));
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
