// daemon/src/gateway/catchup.cpp - replay from the durable inbox for a reconnecting client, and the
// highest seq the gateway knows (put into Socket.IO pids and the /ws welcome).
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
Gateway::Impl::StartCatchup(const std::shared_ptr<Client> &c, int64_t after, std::function<void()> then)
{
	// Live pushes are held back (SeqGate) until the replay is written, so the client sees seq order.
	c->gate.BeginReplay();
	catchup_runs++;
	CatchupPage(c, after, std::move(then));
}

// CatchupPage replays one page of --catchup-limit rows, oldest first, and asks for the next page until
// one comes back short: a client that was away long gets everything it missed. A client that cannot
// read that fast is closed by Enqueue's queue limit and resumes from its offset when it reconnects.
void
Gateway::Impl::CatchupPage(const std::shared_ptr<Client> &c, int64_t after, std::function<void()> then)
{
	std::weak_ptr<Client> weak = c;
	std::weak_ptr<Impl *> self_alive = alive;
	const int64_t page = std::max<int64_t>(cfg.catchup_limit, 1);
	PgParams params{BigintArray(c->joined), std::to_string(after), std::to_string(page)};
	pg.Query(sql_catchup, std::move(params), [this, weak, self_alive, then, page, after](PgResult &&r) {
		if (self_alive.expired())
			return;
		auto c = weak.lock();
		if (!c || c->closed)
			return;
		if (!r.ok) {
			// Without the replay the client would miss messages: make it reconnect and try again.
			Log(Level::Warning, "gateway: catch-up query failed: %s", r.error.c_str());
			CloseClient(*c, LWS_CLOSE_STATUS_GOINGAWAY, "catch-up unavailable");
			return;
		}
		int64_t last = after;
		for (const auto &row : r.rows) {
			if (row.size() < 5 || !row[0] || !row[1] || !row[2] || !row[3])
				continue;
			InboxMessage m;
			if (!JsonInteger(*row[0], &m.seq) || !JsonInteger(*row[2], &m.chat_id))
				continue;
			last = std::max(last, m.seq);
			m.id = *row[1];
			m.body = *row[3];
			m.created_at = row[4].value_or("");
			if (!c->gate.Take(m.seq))
				continue;
			catchup_messages++;
			Enqueue(*c, MakeFrame(c->kind == Client::Kind::SocketIo ? SocketIoMessageEvent(m) : PlainMessageFrame(m)));
			if (c->closed || c->close_due)
				return;
		}
		if (static_cast<int64_t>(r.rows.size()) >= page) {
			CatchupPage(c, last, then);
			return;
		}
		for (FrameRef &f : c->gate.Finish())
			Enqueue(*c, std::move(f));
		if (then)
			then();
	});
}

void
Gateway::Impl::LoadHighSeq()
{
	std::weak_ptr<Impl *> self_alive = alive;
	pg.Query(sql_high_seq, {}, [this, self_alive](PgResult &&r) {
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
