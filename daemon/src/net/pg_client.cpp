// daemon/src/net/pg_client.cpp - non-blocking libpq on a uv_poll (see pg_client.hpp).
//
// States: Idle (waiting for the reconnect timer) -> Connecting (PQconnectPoll) -> Ready.
// One query is in flight at a time; the rest wait in `queue` in submission order.
// For developers: the uv_poll must be closed before PQfinish closes the socket, and recreated
// whenever PQsocket changes during PQconnectPoll (libpq may try another address or retry without
// SSL on a new socket); a poll handle on a closed fd is undefined behaviour in libuv.
#include "net/pg_client.hpp"

#include <deque>
#include <set>

#include <libpq-fe.h>

#include "backoff.hpp"
#include "base/log.hpp"

namespace chat_outboxd {

namespace {

struct Pending {
	std::string sql;
	PgParams params;
	PgClient::Callback cb;
	std::string statement; // non-empty: run as this prepared statement, prepared on first use
};

enum class State { Idle, Connecting, Ready, Closed };

constexpr uint64_t kConnectDeadlineMs = 10000;
constexpr uint64_t kQueryDeadlineMs = 30000;

} // namespace

struct PgClient::Impl {
	uv_loop_t *loop;
	std::string conninfo, name;
	PGconn *conn = nullptr;
	uv_poll_t *poll = nullptr;
	int poll_fd = -1;
	uv_timer_t retry_timer;
	uv_timer_t fail_timer; // fails queries submitted while disconnected, outside the caller's frame
	// deadline_timer bounds a connection attempt (libpq's connect_timeout only applies to blocking
	// connects) and a query's wait for its answer: a socket that stops reporting events must not
	// stall the daemon forever. Daemon queries are short; half a minute means the connection is gone.
	uv_timer_t deadline_timer;
	State state = State::Idle;
	chat_outbox::Backoff backoff{50, 5000};
	StateLog state_log;
	std::deque<Pending> queue;
	bool in_flight = false;
	bool preparing = false;            // the query in flight is the PREPARE of queue.front()
	std::set<std::string> prepared;    // statements this connection has prepared
	PgResult current; // result being assembled for the in-flight query
	std::deque<Pending> rejected;
	std::function<void(bool)> on_state;
	std::function<void()> close_done;
	int open_handles = 0;

	Impl(uv_loop_t *l, std::string ci, std::string n)
	    : loop(l), conninfo(std::move(ci)), name(std::move(n)), state_log("postgres (" + name + ")")
	{
	}

	// --- poll management -------------------------------------------------------------------

	void ClosePoll()
	{
		if (!poll)
			return;
		uv_poll_stop(poll);
		uv_close(reinterpret_cast<uv_handle_t *>(poll), [](uv_handle_t *h) noexcept {
			delete reinterpret_cast<uv_poll_t *>(h);
		});
		poll = nullptr;
		poll_fd = -1;
	}

	void Watch(int events)
	{
		int fd = PQsocket(conn);
		if (fd < 0) {
			// libpq dropped the socket itself (a failed write or read): no event will ever come.
			Lost(PQerrorMessage(conn));
			return;
		}
		if (poll && fd != poll_fd)
			ClosePoll();
		if (!poll) {
			poll = new uv_poll_t;
			if (uv_poll_init(loop, poll, fd) != 0) {
				delete poll;
				poll = nullptr;
				Lost("uv_poll_init failed");
				return;
			}
			poll->data = this;
			poll_fd = fd;
		}
		uv_poll_start(poll, events, OnPoll);
	}

	static void OnPoll(uv_poll_t *h, int status, int events) noexcept
	{
		auto *self = static_cast<Impl *>(h->data);
		try {
			if (status < 0 && self->state == State::Connecting) {
				self->StepConnect(); // let libpq report the error
				return;
			}
			if (self->state == State::Connecting)
				self->StepConnect();
			else if (self->state == State::Ready)
				self->Io(events | (status < 0 ? UV_READABLE : 0));
		} catch (const std::exception &e) {
			Log(Level::Warning, "postgres (%s): %s", self->name.c_str(), e.what());
		} catch (...) {
			Log(Level::Warning, "postgres (%s): unknown exception in poll callback", self->name.c_str());
		}
	}

	// --- connecting ------------------------------------------------------------------------

	void Connect()
	{
		const char *keys[] = {"dbname", "application_name", "connect_timeout", nullptr};
		const char *vals[] = {conninfo.c_str(), name.c_str(), "5", nullptr};
		conn = PQconnectStartParams(keys, vals, 1);
		if (!conn || PQstatus(conn) == CONNECTION_BAD) {
			Lost(conn ? PQerrorMessage(conn) : "out of memory");
			return;
		}
		PQsetnonblocking(conn, 1);
		PQsetNoticeProcessor(
		    conn, [](void *arg, const char *msg) noexcept {
			    Log(Level::Verbose, "postgres (%s) notice: %s", static_cast<Impl *>(arg)->name.c_str(), msg);
		    },
		    this);
		state = State::Connecting;
		ArmDeadline(kConnectDeadlineMs);
		StepConnect();
	}

	void StepConnect()
	{
		switch (PQconnectPoll(conn)) {
		case PGRES_POLLING_READING:
			Watch(UV_READABLE);
			break;
		case PGRES_POLLING_WRITING:
			Watch(UV_WRITABLE);
			break;
		case PGRES_POLLING_OK:
			state = State::Ready;
			uv_timer_stop(&deadline_timer);
			backoff.Reset();
			state_log.Up();
			Watch(UV_READABLE);
			if (on_state)
				on_state(true);
			SendNext();
			break;
		default:
			Lost(PQerrorMessage(conn));
		}
	}

	// Lost tears the connection down, fails what was queued and schedules a reconnect.
	void Lost(const std::string &why)
	{
		std::string reason = why;
		while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' '))
			reason.pop_back();
		bool was_ready = state == State::Ready;
		if (state != State::Closed)
			state = State::Idle; // before FailAll: its callbacks may submit new queries
		uv_timer_stop(&deadline_timer);
		ClosePoll();
		if (conn) {
			PQfinish(conn);
			conn = nullptr;
		}
		prepared.clear();
		preparing = false;
		FailAll(reason);
		if (state == State::Closed)
			return;
		state_log.Down(reason);
		if (was_ready && on_state)
			on_state(false);
		uv_timer_start(&retry_timer, OnRetry, static_cast<uint64_t>(backoff.Next()), 0);
	}

	static void OnRetry(uv_timer_t *t) noexcept
	{
		auto *self = static_cast<Impl *>(t->data);
		try {
			if (self->state == State::Idle)
				self->Connect();
		} catch (...) {
			Log(Level::Warning, "postgres (%s): exception while reconnecting", self->name.c_str());
		}
	}

	void FailAll(const std::string &why)
	{
		std::deque<Pending> failed;
		failed.swap(queue);
		in_flight = false;
		current = PgResult();
		for (auto &p : failed) {
			PgResult r;
			r.connection_lost = true;
			r.error = why.empty() ? "connection lost" : why;
			if (p.cb)
				p.cb(std::move(r));
		}
	}

	// --- queries ---------------------------------------------------------------------------

	void SendNext()
	{
		if (state != State::Ready || in_flight || queue.empty())
			return;
		const Pending &p = queue.front();
		std::vector<const char *> values;
		for (const auto &v : p.params)
			values.push_back(v ? v->c_str() : nullptr);
		int n = static_cast<int>(values.size());
		int sent;
		if (p.statement.empty())
			sent = PQsendQueryParams(conn, p.sql.c_str(), n, nullptr, values.data(), nullptr, nullptr, 0);
		else if (prepared.count(p.statement))
			sent = PQsendQueryPrepared(conn, p.statement.c_str(), n, values.data(), nullptr, nullptr, 0);
		else {
			sent = PQsendPrepare(conn, p.statement.c_str(), p.sql.c_str(), n, nullptr);
			preparing = true;
		}
		if (!sent) {
			Lost(PQerrorMessage(conn));
			return;
		}
		in_flight = true;
		current = PgResult();
		ArmDeadline(kQueryDeadlineMs);
		Flush();
	}

	void Flush()
	{
		int r = PQflush(conn);
		if (r < 0)
			Lost(PQerrorMessage(conn));
		else
			Watch(r == 1 ? (UV_READABLE | UV_WRITABLE) : UV_READABLE);
	}

	void Io(int events)
	{
		if (events & UV_WRITABLE) {
			Flush();
			if (state != State::Ready)
				return;
		}
		if (!(events & UV_READABLE))
			return;
		if (!PQconsumeInput(conn)) {
			Lost(PQerrorMessage(conn));
			return;
		}
		while (state == State::Ready && in_flight && !PQisBusy(conn)) {
			PGresult *res = PQgetResult(conn);
			if (!res) {
				Finish();
				continue;
			}
			Absorb(res);
			PQclear(res);
		}
		if (state == State::Ready && PQstatus(conn) == CONNECTION_BAD)
			Lost(PQerrorMessage(conn));
	}

	// Absorb keeps the first error, or the rows of the last result (a single statement gives one).
	void Absorb(PGresult *res)
	{
		ExecStatusType st = PQresultStatus(res);
		if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
			if (!current.error.empty())
				return;
			current.ok = true;
			current.columns.clear();
			current.rows.clear();
			int nf = PQnfields(res), nt = PQntuples(res);
			for (int f = 0; f < nf; f++)
				current.columns.emplace_back(PQfname(res, f));
			current.rows.reserve(nt);
			for (int t = 0; t < nt; t++) {
				std::vector<std::optional<std::string>> row;
				row.reserve(nf);
				for (int f = 0; f < nf; f++) {
					if (PQgetisnull(res, t, f))
						row.emplace_back(std::nullopt);
					else
						row.emplace_back(std::string(PQgetvalue(res, t, f), PQgetlength(res, t, f)));
				}
				current.rows.push_back(std::move(row));
			}
			return;
		}
		if (!current.error.empty())
			return;
		current.ok = false;
		auto field = [res](int code) {
			const char *v = PQresultErrorField(res, code);
			return std::string(v ? v : "");
		};
		current.error = field(PG_DIAG_MESSAGE_PRIMARY);
		if (current.error.empty())
			current.error = PQresultErrorMessage(res);
		current.sqlstate = field(PG_DIAG_SQLSTATE);
		current.detail = field(PG_DIAG_MESSAGE_DETAIL);
		current.hint = field(PG_DIAG_MESSAGE_HINT);
	}

	void Finish()
	{
		if (preparing) {
			preparing = false;
			if (current.ok) { // now run it; a failed PREPARE fails the query with its error below
				prepared.insert(queue.front().statement);
				in_flight = false;
				uv_timer_stop(&deadline_timer);
				current = PgResult();
				SendNext();
				return;
			}
		}
		Pending p = std::move(queue.front());
		queue.pop_front();
		in_flight = false;
		uv_timer_stop(&deadline_timer);
		PgResult r = std::move(current);
		current = PgResult();
		if (!r.ok && r.error.empty())
			r.error = "no result";
		if (p.cb)
			p.cb(std::move(r));
		SendNext();
	}

	void ArmDeadline(uint64_t ms) { uv_timer_start(&deadline_timer, OnDeadline, ms, 0); }

	static void OnDeadline(uv_timer_t *t) noexcept
	{
		auto *self = static_cast<Impl *>(t->data);
		try {
			if (self->state == State::Connecting)
				self->Lost("no answer to the connection attempt within " + std::to_string(kConnectDeadlineMs / 1000) + " s");
			else if (self->state == State::Ready && self->in_flight)
				self->Lost("no answer to a query within " + std::to_string(kQueryDeadlineMs / 1000) + " s");
		} catch (...) {
			Log(Level::Warning, "postgres (%s): exception at a deadline", self->name.c_str());
		}
	}

	static void OnFailTimer(uv_timer_t *t) noexcept
	{
		auto *self = static_cast<Impl *>(t->data);
		try {
			std::deque<Pending> failed;
			failed.swap(self->rejected);
			for (auto &p : failed) {
				PgResult r;
				r.connection_lost = true;
				r.error = "not connected to postgres";
				if (p.cb)
					p.cb(std::move(r));
			}
		} catch (const std::exception &e) {
			Log(Level::Warning, "postgres (%s): callback threw: %s", self->name.c_str(), e.what());
		}
	}

	static void OnHandleClosed(uv_handle_t *h) noexcept
	{
		auto *self = static_cast<Impl *>(h->data);
		if (--self->open_handles == 0 && self->close_done) {
			auto done = std::move(self->close_done);
			done();
		}
	}
};

PgClient::PgClient(uv_loop_t *loop, std::string conninfo, std::string name)
    : impl_(std::make_unique<Impl>(loop, std::move(conninfo), std::move(name)))
{
	uv_timer_init(loop, &impl_->retry_timer);
	uv_timer_init(loop, &impl_->fail_timer);
	uv_timer_init(loop, &impl_->deadline_timer);
	impl_->retry_timer.data = impl_.get();
	impl_->fail_timer.data = impl_.get();
	impl_->deadline_timer.data = impl_.get();
	impl_->open_handles = 3;
}

PgClient::~PgClient()
{
	// Close() must have run (the timers live inside impl_); a missed Close is a bug, not a crash.
	if (impl_ && impl_->state != State::Closed)
		Log(Level::Warning, "postgres (%s): destroyed without Close()", impl_->name.c_str());
}

void
PgClient::Start()
{
	if (impl_->state == State::Idle && !impl_->conn)
		impl_->Connect();
}

void
PgClient::Query(std::string sql, PgParams params, Callback cb)
{
	QueryPrepared("", std::move(sql), std::move(params), std::move(cb));
}

void
PgClient::QueryPrepared(std::string statement, std::string sql, PgParams params, Callback cb)
{
	Pending p{std::move(sql), std::move(params), std::move(cb), std::move(statement)};
	if (impl_->state == State::Closed)
		return; // shutting down: nobody is left to act on the answer
	if (impl_->state != State::Ready) {
		impl_->rejected.push_back(std::move(p));
		uv_timer_start(&impl_->fail_timer, Impl::OnFailTimer, 0, 0);
		return;
	}
	impl_->queue.push_back(std::move(p));
	impl_->SendNext();
}

bool
PgClient::Connected() const
{
	return impl_->state == State::Ready;
}

void
PgClient::OnStateChange(std::function<void(bool)> on_state)
{
	impl_->on_state = std::move(on_state);
}

void
PgClient::Close(std::function<void()> done)
{
	Impl *d = impl_.get();
	if (d->state == State::Closed)
		return;
	d->state = State::Closed;
	d->ClosePoll();
	if (d->conn) {
		PQfinish(d->conn);
		d->conn = nullptr;
	}
	d->FailAll("client closed");
	Impl::OnFailTimer(&d->fail_timer);
	d->close_done = std::move(done);
	uv_timer_stop(&d->retry_timer);
	uv_timer_stop(&d->fail_timer);
	uv_timer_stop(&d->deadline_timer);
	uv_close(reinterpret_cast<uv_handle_t *>(&d->retry_timer), Impl::OnHandleClosed);
	uv_close(reinterpret_cast<uv_handle_t *>(&d->fail_timer), Impl::OnHandleClosed);
	uv_close(reinterpret_cast<uv_handle_t *>(&d->deadline_timer), Impl::OnHandleClosed);
}

} // namespace chat_outboxd
