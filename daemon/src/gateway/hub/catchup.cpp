// daemon/src/gateway/hub/catchup.cpp - see catchup.hpp.
#include "gateway/hub/catchup.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "gateway/client/core/message_json.hpp"
#include "gateway/hub/hub.hpp"
#include "gateway/hub/query_queue.hpp"
#include "inbox/core/inbox_row.hpp"
#include "inbox/core/inbox_sql.hpp"

namespace chat_outboxd {

namespace {

std::string
BigintArray(const std::vector<int64_t> &ids)
{
	std::string s = "{";
	for (size_t i = 0; i < ids.size(); i++) {
		if (i)
			s += ',';
		s += std::to_string(ids[i]);
	}
	return s + "}";
}

} // namespace

Catchup::Catchup(Hub &hub, QueryQueue &queries, const Config &cfg) : hub_(hub), queries_(queries), cfg_(cfg)
{
	std::string svc = QuoteIdent(cfg.service);
	// Functions and operators are schema-qualified: the connection's search_path decides nothing.
	// A page is at most $3 rows and stops at the row whose body crosses $4 bytes (always at least one
	// row), so one result never holds more than about --catchup-page-bytes. octet_length reads the
	// stored size without decompressing; only the rows returned are detoasted. `n` (rows under the
	// row limit) tells the caller whether the byte limit cut the page short.
	for (bool with_sender : {false, true})
		sql_page_[with_sender] =
		    "SELECT " + InboxRowColumns(with_sender) + ", n FROM (SELECT *, pg_catalog.sum(len) OVER "
		                                               "(ORDER BY seq ROWS UNBOUNDED PRECEDING) OPERATOR(pg_catalog.-) len AS before, pg_catalog.count(*) "
		                                               "OVER () AS n FROM (SELECT seq, message_id, chat_id, body, created_at, " +
		    std::string(with_sender ? "sender, target, kind, edited_at, deleted_at, " : "") + "pg_catalog.octet_length(body)::bigint AS len FROM " + svc +
		    ".inbox WHERE chat_id OPERATOR(pg_catalog.=) ANY ($1::bigint[]) AND seq OPERATOR(pg_catalog.>) "
		    "$2::bigint ORDER BY seq LIMIT $3::bigint) page) sized WHERE before OPERATOR(pg_catalog.<) $4::bigint "
		    "ORDER BY seq";
	queries_.OnSlotFree([this] { OnSlotFree(); });
}

void
Catchup::OnSlotFree()
{
	while (!queries_.Full() && !waiting_.empty()) {
		std::shared_ptr<Client> c = waiting_.front().lock();
		waiting_.pop_front();
		if (c && !c->IsClosed() && c->replay == Client::Replay::WaitingSlot)
			Page(c);
	}
}

void
Catchup::Start(const std::shared_ptr<Client> &c, int64_t after)
{
	// Live pushes are held back (SeqGate) until the replay is written, so the client sees seq order.
	c->gate.BeginReplay();
	c->replay_after = after;
	c->replay_run++;
	hub_.CountCatchupRun();
	Page(c);
}

// Page replays one page, oldest first: at most --catchup-limit rows and about
// --catchup-page-bytes of bodies. The next page is read once the client's queue is back under
// --catchup-page-bytes (Drained), so a client that does not read makes the replay wait instead of
// filling memory. The replay ends with a page that the row limit did not fill and the byte limit
// did not cut, asked for after the last time held live messages were dropped (DropHeld): every
// message committed before that query is in its answer or held.
void
Catchup::Page(const std::shared_ptr<Client> &c)
{
	if (queries_.Full()) {
		if (c->replay != Client::Replay::WaitingSlot) {
			c->replay = Client::Replay::WaitingSlot;
			waiting_.push_back(c);
		}
		return;
	}
	c->replay = Client::Replay::Querying;
	c->reread = false;
	std::weak_ptr<Client> weak = c;
	const int64_t page = cfg_.catchup_limit;
	PgParams params{BigintArray(c->joined), std::to_string(c->replay_after), std::to_string(page),
	                std::to_string(cfg_.catchup_page_bytes)};
	queries_.RunBySchema(sql_page_, std::move(params), [this, weak, page, run = c->replay_run](PgResult &&r) {
		auto c = weak.lock();
		if (!c || c->IsClosed() || c->replay != Client::Replay::Querying || c->replay_run != run)
			return;
		if (!r.ok) {
			// Without the replay the client would miss messages: make it reconnect and try again.
			Log(Level::Warning, "gateway: catch-up query failed: %s", r.error.c_str());
			c->replay = Client::Replay::Off;
			hub_.Close(*c, LWS_CLOSE_STATUS_GOINGAWAY, "catch-up unavailable");
			return;
		}
		int64_t under_limit = 0; // rows the row limit let through, before the byte cut
		for (auto &row : r.rows) {
			InboxMessage m;
			if (row.size() <= kInboxRowColumns || !ReadInboxRow(row, &m))
				continue;
			ReadInt64(row[kInboxRowColumns], &under_limit);
			c->replay_after = std::max(c->replay_after, m.seq);
			if (!c->gate.Take(m.seq))
				continue;
			// the page was asked for before the client left the chat (--authz membership: removed)
			if (!std::binary_search(c->joined.begin(), c->joined.end(), m.chat_id))
				continue;
			hub_.CountCatchupMessage();
			FrameRef f = MakeFrame(c->kind == Client::Kind::SocketIo ? SocketIoMessageEvent(m) : PlainMessageFrame(m));
			if (!hub_.Fits(*c, f->Text().size()) && c->held_bytes)
				hub_.DropHeld(*c); // replayed rows go first; the held ones are read again later
			hub_.Enqueue(*c, std::move(f));
			if (!c->IsOpen())
				return;
		}
		bool more = under_limit >= page || under_limit > static_cast<int64_t>(r.rows.size());
		r.rows.clear();
		if (more || c->reread) {
			c->replay = Client::Replay::WaitingDrain;
			hub_.Drained(*c); // reads the next page now if the client keeps up
			return;
		}
		c->replay = Client::Replay::Off;
		c->held_bytes = 0;
		for (FrameRef &f : c->gate.Finish())
			hub_.Enqueue(*c, std::move(f));
	});
}

} // namespace chat_outboxd
