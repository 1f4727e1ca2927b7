// daemon/src/gateway/catchup.cpp - replay from the durable inbox for a reconnecting client, the
// highest seq the gateway knows (put into Socket.IO pids and the /ws welcome), and the bound on the
// gateway's queries waiting for Postgres.
#include <algorithm>

#include "gateway/core/message_json.hpp"
#include "base/log.hpp"
#include "gateway/gateway_impl.hpp"

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

void
Gateway::Impl::RunQuery(const std::string &sql, PgParams params, std::function<void(PgResult &&)> cb)
{
	queries_out++;
	std::weak_ptr<Impl *> self_alive = alive;
	pg.Query(sql, std::move(params), [this, self_alive, cb = std::move(cb)](PgResult &&r) {
		if (self_alive.expired())
			return;
		queries_out--;
		cb(std::move(r));
		// A slot is free: the oldest replay waiting for one goes on.
		while (!QueryQueueFull() && !catchup_waiting.empty()) {
			std::shared_ptr<Client> c = catchup_waiting.front().lock();
			catchup_waiting.pop_front();
			if (c && !c->closed && c->catchup == Client::Catchup::WaitingSlot)
				CatchupPage(c);
		}
	});
}

void
Gateway::Impl::StartCatchup(const std::shared_ptr<Client> &c, int64_t after)
{
	// Live pushes are held back (SeqGate) until the replay is written, so the client sees seq order.
	c->gate.BeginReplay();
	c->catchup_after = after;
	c->catchup_run++;
	catchup_runs++;
	CatchupPage(c);
}

// CatchupPage replays one page, oldest first: at most --catchup-limit rows and about
// --catchup-page-bytes of bodies. The next page is read once the client's queue is back under
// --catchup-page-bytes (Drained), so a client that does not read makes the replay wait instead of
// filling memory. The replay ends with a page that the row limit did not fill and the byte limit
// did not cut, asked for after the last time held live messages were dropped (DropHeld): every
// message committed before that query is in its answer or held.
void
Gateway::Impl::CatchupPage(const std::shared_ptr<Client> &c)
{
	if (QueryQueueFull()) {
		if (c->catchup != Client::Catchup::WaitingSlot) {
			c->catchup = Client::Catchup::WaitingSlot;
			catchup_waiting.push_back(c);
		}
		return;
	}
	c->catchup = Client::Catchup::Querying;
	c->reread = false;
	std::weak_ptr<Client> weak = c;
	const int64_t page = cfg.catchup_limit;
	PgParams params{BigintArray(c->joined), std::to_string(c->catchup_after), std::to_string(page),
	                std::to_string(cfg.catchup_page_bytes)};
	RunQuery(sql_catchup, std::move(params), [this, weak, page, run = c->catchup_run](PgResult &&r) {
		auto c = weak.lock();
		if (!c || c->closed || c->catchup != Client::Catchup::Querying || c->catchup_run != run)
			return;
		if (!r.ok) {
			// Without the replay the client would miss messages: make it reconnect and try again.
			Log(Level::Warning, "gateway: catch-up query failed: %s", r.error.c_str());
			c->catchup = Client::Catchup::Off;
			CloseClient(*c, LWS_CLOSE_STATUS_GOINGAWAY, "catch-up unavailable");
			return;
		}
		int64_t under_limit = 0; // rows the row limit let through, before the byte cut
		for (auto &row : r.rows) {
			if (row.size() < 6 || !row[0] || !row[1] || !row[2] || !row[3])
				continue;
			InboxMessage m;
			if (!JsonInteger(*row[0], &m.seq) || !JsonInteger(*row[2], &m.chat_id))
				continue;
			if (row[5])
				JsonInteger(*row[5], &under_limit);
			c->catchup_after = std::max(c->catchup_after, m.seq);
			m.id = std::move(*row[1]);
			m.body = std::move(*row[3]);
			m.created_at = row[4].value_or("");
			if (!c->gate.Take(m.seq))
				continue;
			catchup_messages++;
			FrameRef f = MakeFrame(c->kind == Client::Kind::SocketIo ? SocketIoMessageEvent(m) : PlainMessageFrame(m));
			if (!Fits(*c, f->Text().size()) && c->held_bytes)
				DropHeld(*c); // replayed rows go first; the held ones are read again later
			Enqueue(*c, std::move(f));
			if (c->closed || c->close_due)
				return;
		}
		bool more = under_limit >= page || under_limit > static_cast<int64_t>(r.rows.size());
		r.rows.clear();
		if (more || c->reread) {
			c->catchup = Client::Catchup::WaitingDrain;
			Drained(*c); // reads the next page now if the client keeps up
			return;
		}
		c->catchup = Client::Catchup::Off;
		c->held_bytes = 0;
		for (FrameRef &f : c->gate.Finish())
			Enqueue(*c, std::move(f));
	});
}

void
Gateway::Impl::LoadHighSeq()
{
	std::weak_ptr<Impl *> self_alive = alive;
	RunQuery(sql_high_seq, {}, [this, self_alive](PgResult &&r) {
		if (self_alive.expired() || shutting_down)
			return;
		int64_t v = 0;
		if (r.ok && !r.rows.empty() && !r.rows[0].empty() && r.rows[0][0] && JsonInteger(*r.rows[0][0], &v)) {
			high_seq = std::max(high_seq, v);
			return;
		}
		// Until this succeeds pids carry no seq; retry quietly (PgClient logs the outage itself).
		ScheduleIn(high_seq_retry, 1000);
	});
}

} // namespace chat_outboxd
