// daemon/src/gateway/conversation/history.cpp - see history.hpp.
#include "gateway/conversation/history.hpp"

#include <algorithm>
#include <limits>

#include "gateway/conversation/core/history.hpp"
#include "gateway/client/core/message_json.hpp"
#include "gateway/hub/hub.hpp"
#include "gateway/hub/query_queue.hpp"
#include "inbox/core/inbox_row.hpp"
#include "inbox/core/inbox_sql.hpp"

namespace chat_outboxd {

namespace {

// Each kind is read like a catch-up page: newest first, at most $limit+1 rows (one more than a page
// takes, so the merge knows whether more exist), stopping at the row whose body crosses $bytes. `n`
// is the kind's rows under the row limit; a kind is complete when n <= limit and no row was cut.
// Both kinds are read as inbox rows (InboxRowColumns), after `received`: a sent message's id is
// named message_id and its seq is NULL.
std::string
KindSql(const std::string &svc, bool received, bool with_sender)
{
	const std::string order = received ? "seq DESC" : "created_at DESC, message_id DESC";
	// A received message's current state is its row (inbox_apply keeps it); the rows of its edits and
	// deletes are not messages. A sent one's is its messages row.
	const std::string edits = !with_sender ? "NULL::pg_catalog.uuid AS target, NULL::pg_catalog.text AS kind, "
	                                         "NULL::pg_catalog.timestamptz AS edited_at, NULL::pg_catalog.timestamptz AS deleted_at"
	                          : received   ? "target, kind, edited_at, deleted_at"
	                                       : "NULL::pg_catalog.uuid AS target, NULL::pg_catalog.text AS kind, edited_at, deleted_at";
	const std::string cols = received
	                             ? "seq, message_id, chat_id, body, created_at, " + SenderColumn(with_sender) + ", " + edits +
	                                   ", COALESCE(created_at, received_at) AS t"
	                             : "NULL::bigint AS seq, id AS message_id, chat_id, body, created_at, " + SenderColumn(with_sender) + ", " + edits +
	                                   ", created_at AS t";
	const std::string where = received
	                              ? "chat_id OPERATOR(pg_catalog.=) $1::bigint AND seq OPERATOR(pg_catalog.<) $2::bigint" +
	                                    std::string(with_sender ? " AND target IS NULL" : "")
	                              : "chat_id OPERATOR(pg_catalog.=) $1::bigint AND (created_at OPERATOR(pg_catalog.<) $3::timestamptz OR "
	                                "(created_at OPERATOR(pg_catalog.=) $3::timestamptz AND id OPERATOR(pg_catalog.<) $4::uuid))";
	return "SELECT " + std::string(received ? "true" : "false") + " AS received, " + InboxRowColumns(true) +
	       ", (EXTRACT(epoch FROM t) OPERATOR(pg_catalog.*) 1000000)::bigint, n FROM (SELECT *, "
	       "pg_catalog.sum(len) OVER (ORDER BY " +
	       order + " ROWS UNBOUNDED PRECEDING) OPERATOR(pg_catalog.-) len AS "
	               "before, pg_catalog.count(*) OVER () AS n FROM (SELECT " +
	       cols +
	       ", pg_catalog.octet_length(body)::bigint AS len FROM " + svc + (received ? ".inbox" : ".messages") +
	       " WHERE " + where + " ORDER BY " + order + " LIMIT $5::bigint) page) sized WHERE before OPERATOR(pg_catalog.<) $6::bigint";
}

} // namespace

History::History(ConvContext &ctx) : ctx_(ctx)
{
	std::string svc = QuoteIdent(ctx.cfg.service);
	for (bool with_sender : {false, true})
		sql_[with_sender] = "(" + KindSql(svc, true, with_sender) + ") UNION ALL (" + KindSql(svc, false, with_sender) + ")";
}

void
History::Page(const std::shared_ptr<Client> &c, const conv::HistoryRequest &req, const Conversation::Reply &reply)
{
	if (c->history_out >= conv::kMaxHistoryInFlight)
		return reply(conv::Error("busy", "2 history requests are already out for this connection; wait for their answers"));
	if (ctx_.queries.Full())
		return reply(conv::Error("busy", "too many queries waiting for the database; retry later"));
	c->history_out++;
	const auto max_bytes = static_cast<int64_t>(ctx_.cfg.catchup_page_bytes);
	PgParams params = {std::to_string(req.chat_id),
	                   std::to_string(req.before_seq.value_or(std::numeric_limits<int64_t>::max())),
	                   req.before_sent ? req.before_sent->created_at : std::string("infinity"),
	                   req.before_sent ? req.before_sent->id : std::string("ffffffff-ffff-ffff-ffff-ffffffffffff"),
	                   std::to_string(req.limit + 1), std::to_string(max_bytes)};
	std::weak_ptr<Client> weak = c;
	ctx_.queries.RunBySchema(sql_, std::move(params), [weak, req, reply, max_bytes](PgResult &&r) {
		auto live = weak.lock();
		if (!live)
			return;
		live->history_out--;
		if (live->IsClosed())
			return;
		if (!r.ok) {
			if (r.sqlstate.rfind("22", 0) == 0) // a before_sent Postgres cannot read as a time
				return reply(conv::Error("bad_request", "before_sent must be null or a next.before_sent this gateway gave"));
			return reply(conv::Error("unavailable", "the database did not answer the history query; retry"));
		}
		HistoryKind received, sent;
		int64_t n_received = 0, n_sent = 0;
		for (const auto &row : r.rows) {
			if (row.size() < 13 || !row[2] || !row[3])
				continue;
			bool in = row[0] && *row[0] == "t";
			HistoryRow h;
			JsonInteger(*row[3], &h.chat_id);
			if (in && row[1])
				JsonInteger(*row[1], &h.seq);
			h.id = *row[2];
			h.body = row[4].value_or("");
			h.created_at = row[5];
			h.sender = row[6];
			h.edited_at = row[9];
			h.deleted_at = row[10];
			if (row[11])
				JsonInteger(*row[11], &h.time_us);
			int64_t n = 0;
			if (row[12])
				JsonInteger(*row[12], &n);
			(in ? n_received : n_sent) = n;
			(in ? received : sent).rows.push_back(std::move(h));
		}
		// UNION ALL keeps each branch's rows in its own ORDER BY only by accident: sort them again.
		std::sort(received.rows.begin(), received.rows.end(), [](const HistoryRow &a, const HistoryRow &b) { return a.seq > b.seq; });
		std::sort(sent.rows.begin(), sent.rows.end(), [](const HistoryRow &a, const HistoryRow &b) {
			return a.time_us != b.time_us ? a.time_us > b.time_us : a.id > b.id;
		});
		received.complete = n_received <= req.limit && static_cast<int64_t>(received.rows.size()) == n_received;
		sent.complete = n_sent <= req.limit && static_cast<int64_t>(sent.rows.size()) == n_sent;
		reply(HistoryResult(req.chat_id, MergeHistory(req, received, sent, static_cast<size_t>(max_bytes))));
	});
}

} // namespace chat_outboxd
