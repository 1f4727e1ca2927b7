// daemon/src/gateway/hub/catchup.cpp - see catchup.hpp.
#include "gateway/hub/catchup.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

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
	queries_.OnSlotFree([this] { ReadPages(); });
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

void
Catchup::Page(const std::shared_ptr<Client> &c)
{
	c->replay = Client::Replay::InLine;
	lines_.Add(c->joined, Reader{c, c->replay_run});
	ReadPages();
}

void
Catchup::ReadPages()
{
	while (!queries_.Full()) {
		std::optional<Chats> chats = lines_.NextReady();
		if (!chats)
			return;
		Read(*chats);
	}
}

// Read reads one page for the oldest clients in chats' line (at most kCatchupBatchClients), oldest first:
// at most --catchup-limit rows and about --catchup-page-bytes of bodies, from their lowest cursor. Each
// client's next page is asked for once its queue is back under --catchup-page-bytes (Drained), so a client
// that does not read makes only its own replay wait instead of filling memory. A client's replay ends with
// a page that the row limit did not fill and the byte limit did not cut, asked for after the last time its
// held live messages were dropped (DropHeld): every message committed before that query is in its answer
// or held.
void
Catchup::Read(const Chats &chats)
{
	std::vector<Reader> taken = lines_.Take(
	    chats, kCatchupBatchClients, SIZE_MAX,
	    [](const Reader &r) {
		auto c = r.client.lock();
		return c && !c->IsClosed() && c->replay == Client::Replay::InLine && c->replay_run == r.run;
	    },
	    [](const Reader &) { return size_t{1}; });
	std::vector<Reader> readers;
	std::vector<std::shared_ptr<Client>> live, moved;
	for (Reader &r : taken) {
		auto c = r.client.lock();
		if (c->joined != chats) {
			moved.push_back(c); // it joined or left a chat while it waited: it reads with the clients of its chats of now
			continue;
		}
		live.push_back(c);
		readers.push_back(std::move(r));
	}
	for (auto &c : moved)
		lines_.Add(c->joined, Reader{c, c->replay_run});
	if (readers.empty()) {
		lines_.Done(chats);
		return;
	}
	const int64_t from = CatchupPage::LowestCursor(live.begin(), live.end(), [](const std::shared_ptr<Client> &c) { return c->replay_after; });
	for (auto &c : live) {
		c->replay = Client::Replay::Querying;
		c->reread = false;
	}
	hub_.CountCatchupRead(readers.size());
	const int64_t page = cfg_.catchup_limit;
	PgParams params{BigintArray(chats), std::to_string(from), std::to_string(page), std::to_string(cfg_.catchup_page_bytes)};
	queries_.RunBySchema(sql_page_, std::move(params), [this, chats, readers = std::move(readers), from, page](PgResult &&r) {
		auto reading = [](const Reader &rd) {
			auto c = rd.client.lock();
			return c && !c->IsClosed() && c->replay == Client::Replay::Querying && c->replay_run == rd.run ? c : nullptr;
		};
		if (!r.ok) {
			// Without the replay the clients would miss messages: make them reconnect and try again.
			Log(Level::Warning, "gateway: catch-up query failed: %s", r.error.c_str());
			for (const Reader &rd : readers)
				if (auto c = reading(rd)) {
					c->replay = Client::Replay::Off;
					hub_.Close(*c, LWS_CLOSE_STATUS_GOINGAWAY, "catch-up unavailable");
				}
			lines_.Done(chats);
			ReadPages();
			return;
		}
		int64_t under_limit = 0; // rows the row limit let through, before the byte cut
		std::vector<InboxMessage> rows;
		std::vector<int64_t> seqs;
		rows.reserve(r.rows.size());
		for (auto &row : r.rows) {
			InboxMessage m;
			if (row.size() <= kInboxRowColumns || !ReadInboxRow(row, &m))
				continue;
			ReadInt64(row[kInboxRowColumns], &under_limit);
			seqs.push_back(m.seq);
			rows.push_back(std::move(m));
		}
		bool more = under_limit >= page || under_limit > static_cast<int64_t>(r.rows.size());
		r.rows.clear();
		CatchupPage p(from, std::move(seqs), more);
		std::vector<FrameRef> frames[2];
		for (auto &f : frames)
			f.resize(rows.size());
		for (const Reader &rd : readers)
			if (auto c = reading(rd))
				HandOut(*c, p, rows, frames);
		lines_.Done(chats);
		ReadPages();
	});
}

void
Catchup::HandOut(Client &c, const CatchupPage &page, const std::vector<InboxMessage> &rows, std::vector<FrameRef> (&frames)[2])
{
	const bool sio = c.kind == Client::Kind::SocketIo;
	for (size_t i = page.FirstFor(c.replay_after); i < rows.size(); i++) {
		const InboxMessage &m = rows[i];
		if (!c.gate.Take(m.seq))
			continue;
		// the page was asked for before the client left the chat (--authz membership: removed)
		if (!std::binary_search(c.joined.begin(), c.joined.end(), m.chat_id))
			continue;
		hub_.CountCatchupMessage();
		FrameRef &f = frames[sio][i]; // made once per protocol for all the readers that get it
		if (!f)
			f = MakeFrame(sio ? SocketIoMessageEvent(m) : PlainMessageFrame(m));
		if (!hub_.Fits(c, f->Text().size()) && c.held_bytes)
			hub_.DropHeld(c); // replayed rows go first; the held ones are read again later
		hub_.Enqueue(c, f);
		if (!c.IsOpen())
			return;
	}
	c.replay_after = page.CursorAfter(c.replay_after);
	if (page.More() || c.reread) {
		c.replay = Client::Replay::WaitingDrain;
		hub_.Drained(c); // reads the next page now if the client keeps up
		return;
	}
	c.replay = Client::Replay::Off;
	c.held_bytes = 0;
	for (FrameRef &f : c.gate.Finish())
		hub_.Enqueue(c, std::move(f));
}

} // namespace chat_outboxd
