// daemon/src/net/pg_client.cpp - non-blocking libpq on a uv_poll (see pg_client.hpp).
//
// States: Idle (waiting for the reconnect timer) -> Connecting (PQconnectPoll) -> Ready.
// One query is in flight at a time; the rest wait in `queue` in submission order. A pipeline is one
// query: the connection is in libpq's pipeline mode only while it is in flight.
// For developers: the uv_poll must be closed before PQfinish closes the socket, and recreated
// whenever PQsocket changes during PQconnectPoll (libpq may try another address or retry without
// SSL on a new socket); a poll handle on a closed fd is undefined behaviour in libuv. Every handle
// is a UvPoll or UvTimer (base/uv_handle.hpp), so each is closed once whatever order a lost
// connection and a Close arrive in.
#include "net/pg_client.hpp"

#include <deque>
#include <set>

#include <libpq-fe.h>

#include "common/backoff.hpp"
#include "common/process/pg_primary.hpp"
#include "base/c_boundary.hpp"
#include "metrics/core/daemon_metrics.hpp"
#include "base/log.hpp"
#include "base/uv_timer.hpp"
#include "net/core/query_order.hpp"

namespace chat_outboxd {

namespace {

struct Pending {
	std::string sql;
	PgParams params;
	PgClient::Callback cb;
	std::string statement;             // non-empty: run as this prepared statement, prepared on first use
	std::vector<PgStatement> pipeline; // non-empty: these statements instead, in one pipeline
};

// What a pipeline's next result belongs to: the PREPARE of a statement not yet prepared on this
// connection, or an execution.
struct PipelineStep {
	std::string prepares; // the statement's name; empty for an execution
};

enum class State { Idle,
	               Connecting,
	               Ready,
	               Closed };

constexpr uint64_t kConnectDeadlineMs = 10000;
constexpr uint64_t kQueryDeadlineMs = 30000;

} // namespace

struct PgClient::Impl {
	uv_loop_t *loop;
	std::string conninfo, name;
	PGconn *conn = nullptr;
	UvPoll poll{"postgres"};
	UvTimer retry_timer;
	UvTimer fail_timer; // fails queries submitted while disconnected, outside the caller's frame
	// deadline_timer bounds a connection attempt (libpq's connect_timeout only applies to blocking
	// connects) and a query's wait for its answer: a socket that stops reporting events must not
	// stall the daemon forever. Daemon queries are short; half a minute means the connection is gone.
	UvTimer deadline_timer;
	State state = State::Idle;
	chat_outbox::Backoff backoff{chat_outbox::kServerRetryFirstMs, chat_outbox::kPostgresRetryMaxMs};
	StateLog state_log;
	bool worked = false; // ready once
	bool lost = false;   // lost since: the next ready is a reconnect (Reconnects())
	std::deque<Pending> queue;
	bool in_flight = false;
	bool preparing = false;         // the query in flight is the PREPARE of queue.front()
	std::deque<PipelineStep> steps; // the pipeline in flight: the results still to come, in order
	bool pipelining = false;        // the query in flight is a pipeline (libpq is in pipeline mode)
	size_t pipeline_next = 0;       // its first statement not sent yet (after_answers), or its size
	std::set<std::string> prepared; // statements this connection has prepared
	PgResult current;               // result being assembled for the in-flight query
	std::deque<Pending> rejected;
	std::function<void(bool)> on_state;
	std::function<void(const std::string &, const std::string &)> on_notify;

	Impl(uv_loop_t *l, std::string ci, std::string n)
	    : loop(l), conninfo(std::move(ci)), name(std::move(n)), retry_timer(l, "postgres reconnect"),
	      fail_timer(l, "postgres not connected"), deadline_timer(l, "postgres deadline"),
	      state_log("postgres (" + name + ")")
	{
	}

	// --- poll management -------------------------------------------------------------------

	void Watch(int events)
	{
		int fd = PQsocket(conn);
		if (fd < 0) {
			// libpq dropped the socket itself (a failed write or read): no event will ever come.
			Lost(PQerrorMessage(conn));
			return;
		}
		if (poll.Fd() != fd && !poll.Open(loop, fd)) {
			Lost("uv_poll_init failed");
			return;
		}
		poll.Start(events, [this](int status, int ev) { OnPoll(status, ev); });
	}

	void OnPoll(int status, int events)
	{
		if (state == State::Connecting)
			StepConnect(); // on an error status too: libpq reports it
		else if (state == State::Ready)
			Io(events | (status < 0 ? UV_READABLE : 0));
	}

	// --- connecting ------------------------------------------------------------------------

	void Connect()
	{
		// a primary unless the URL says otherwise (common/process/pg_primary.hpp); the keywords after dbname win
		const char *keys[] = {chat_outbox::kTargetSessionAttrsKey, "dbname", "application_name", "connect_timeout", nullptr};
		const char *vals[] = {chat_outbox::kTargetSessionAttrsPrimary, conninfo.c_str(), name.c_str(), "5", nullptr};
		conn = PQconnectStartParams(keys, vals, 1);
		if (!conn || PQstatus(conn) == CONNECTION_BAD) {
			Lost(conn ? PQerrorMessage(conn) : "out of memory");
			return;
		}
		PQsetnonblocking(conn, 1);
		PQsetNoticeProcessor(
		    conn, [](void *arg, const char *msg) noexcept {
			    CallFromC("postgres", "the notice processor", [arg, msg] {
				    Log(Level::Verbose, "postgres (%s) notice: %s", static_cast<Impl *>(arg)->name.c_str(), msg);
			    });
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
			deadline_timer.Stop();
			backoff.Reset();
			if (lost)
				Reconnects().postgres++;
			worked = true;
			lost = false;
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
		deadline_timer.Stop();
		poll.Close();
		if (conn) {
			PQfinish(conn);
			conn = nullptr;
		}
		prepared.clear();
		preparing = false;
		pipelining = false;
		steps.clear();
		FailAll(reason);
		if (state == State::Closed)
			return;
		state_log.Down(reason);
		lost = worked; // a connection that never worked is not a reconnect when it does
		if (was_ready && on_state)
			on_state(false);
		retry_timer.Start(static_cast<uint64_t>(backoff.Next()), [this] {
			if (state == State::Idle)
				Connect();
		});
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
		if (!p.pipeline.empty()) {
			SendPipeline(p.pipeline);
			return;
		}
		std::vector<const char *> values = Values(p.params);
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
		AwaitAnswer();
	}

	static std::vector<const char *> Values(const PgParams &params)
	{
		std::vector<const char *> values;
		for (const auto &v : params)
			values.push_back(v ? v->c_str() : nullptr);
		return values;
	}

	// AwaitAnswer: what was queued is the query in flight; flush it and wait for its results.
	void AwaitAnswer()
	{
		in_flight = true;
		current = PgResult();
		ArmDeadline(kQueryDeadlineMs);
		Flush();
	}

	// SendPipeline queues every statement (a PREPARE before each one this connection has not prepared)
	// and one Sync, then flushes them all: the server answers them in order, in one round trip. A
	// statement after_answers waits for the answers to those before it (SendPipelineRest).
	void SendPipeline(const std::vector<PgStatement> &statements)
	{
		if (!PQenterPipelineMode(conn)) {
			Lost(PQerrorMessage(conn));
			return;
		}
		pipelining = true;
		steps.clear();
		pipeline_next = 0;
		if (SendPipelineRest(statements))
			AwaitAnswer();
	}

	// SendPipelineRest queues the statements from pipeline_next up to the next one after_answers (then
	// a flush request) or to the end (then the Sync); false when the connection was lost.
	bool SendPipelineRest(const std::vector<PgStatement> &statements)
	{
		size_t i = pipeline_next;
		for (; i < statements.size() && (i == pipeline_next || !statements[i].after_answers); i++) {
			const PgStatement &st = statements[i];
			std::vector<const char *> values = Values(st.params);
			int n = static_cast<int>(values.size());
			bool sent = true;
			if (st.name.empty())
				sent = PQsendQueryParams(conn, st.sql.c_str(), n, nullptr, values.data(), nullptr, nullptr, 0);
			else {
				if (!prepared.count(st.name)) {
					sent = PQsendPrepare(conn, st.name.c_str(), st.sql.c_str(), n, nullptr);
					steps.push_back({st.name});
				}
				sent = sent && PQsendQueryPrepared(conn, st.name.c_str(), n, values.data(), nullptr, nullptr, 0);
			}
			if (!sent) {
				Lost(PQerrorMessage(conn));
				return false;
			}
			steps.push_back({});
		}
		pipeline_next = i;
		if (!(i < statements.size() ? PQsendFlushRequest(conn) : PQpipelineSync(conn))) {
			Lost(PQerrorMessage(conn));
			return false;
		}
		return true;
	}

	// PipelineResult takes one result of the pipeline in flight: each statement's result is followed
	// by a null one, and the Sync's result ends the pipeline. After an error the server skips the
	// rest up to the Sync, which libpq reports as PGRES_PIPELINE_ABORTED results.
	void PipelineResult(PGresult *res)
	{
		if (!res) { // the end of one statement's results
			if (!steps.empty())
				steps.pop_front();
			const std::vector<PgStatement> &statements = queue.front().pipeline;
			if (steps.empty() && pipeline_next < statements.size()) {
				// every statement sent is answered: the rest, or after an error only the Sync
				if (!current.error.empty())
					pipeline_next = statements.size();
				if (SendPipelineRest(statements))
					Flush();
			}
			return;
		}
		ExecStatusType st = PQresultStatus(res);
		if (st == PGRES_PIPELINE_SYNC) {
			PQclear(res);
			pipelining = false;
			if (!PQexitPipelineMode(conn)) {
				Lost(PQerrorMessage(conn));
				return;
			}
			Finish();
			return;
		}
		if (st == PGRES_PIPELINE_ABORTED) {
			if (current.error.empty()) {
				current.ok = false;
				current.error = "pipeline aborted";
			}
		} else {
			if (!steps.empty() && !steps.front().prepares.empty() && st == PGRES_COMMAND_OK)
				prepared.insert(steps.front().prepares);
			Absorb(res);
		}
		PQclear(res);
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
			if (pipelining) {
				PipelineResult(res);
				continue;
			}
			if (!res) {
				Finish();
				continue;
			}
			Absorb(res);
			PQclear(res);
		}
		// notifications (LISTEN) arrive between and during queries; each callback may query again
		while (state == State::Ready && conn) {
			PGnotify *n = PQnotifies(conn);
			if (!n)
				break;
			std::string channel = n->relname, payload = n->extra;
			PQfreemem(n);
			if (on_notify)
				on_notify(channel, payload);
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
				deadline_timer.Stop();
				current = PgResult();
				SendNext();
				return;
			}
		}
		Pending p = std::move(queue.front());
		queue.pop_front();
		in_flight = false;
		deadline_timer.Stop();
		PgResult r = std::move(current);
		current = PgResult();
		if (!r.ok && r.error.empty())
			r.error = "no result";
		if (p.cb)
			p.cb(std::move(r));
		SendNext();
	}

	void ArmDeadline(uint64_t ms)
	{
		deadline_timer.Start(ms, [this] {
			if (state == State::Connecting)
				Lost("no answer to the connection attempt within " + std::to_string(kConnectDeadlineMs / 1000) + " s");
			else if (state == State::Ready && in_flight)
				Lost("no answer to a query within " + std::to_string(kQueryDeadlineMs / 1000) + " s");
		});
	}

	// Enqueue sends p after the queries before it; while disconnected it fails p at the next loop turn.
	void Enqueue(Pending &&p)
	{
		if (state == State::Closed)
			return; // shutting down: nobody is left to act on the answer
		if (state != State::Ready) {
			rejected.push_back(std::move(p));
			fail_timer.Start(0, [this] { FailRejected(); });
			return;
		}
		queue.push_back(std::move(p));
		SendNext();
	}

	// FailRejected answers the queries submitted while disconnected.
	void FailRejected()
	{
		std::deque<Pending> failed;
		failed.swap(rejected);
		for (auto &p : failed) {
			PgResult r;
			r.connection_lost = true;
			r.error = "not connected to postgres";
			if (p.cb)
				p.cb(std::move(r));
		}
	}
};

PgClient::PgClient(uv_loop_t *loop, std::string conninfo, std::string name)
    : impl_(std::make_unique<Impl>(loop, std::move(conninfo), std::move(name)))
{
}

PgClient::~PgClient()
{
	// The handles close themselves with impl_; the connection and the callers' callbacks need Close.
	if (impl_ && impl_->state != State::Closed) {
		Log(Level::Warning, "postgres (%s): destroyed without Close()", impl_->name.c_str());
		if (impl_->conn) {
			impl_->poll.Close();
			PQfinish(impl_->conn);
			impl_->conn = nullptr;
		}
	}
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
PgClient::QueryFirst(std::string sql, PgParams params, Callback cb)
{
	if (impl_->state != State::Ready) {
		Query(std::move(sql), std::move(params), std::move(cb)); // failed the same way as any query
		return;
	}
	InsertAhead(impl_->queue, impl_->in_flight, Pending{std::move(sql), std::move(params), std::move(cb), "", {}});
	impl_->SendNext();
}

void
PgClient::QueryPrepared(std::string statement, std::string sql, PgParams params, Callback cb)
{
	impl_->Enqueue(Pending{std::move(sql), std::move(params), std::move(cb), std::move(statement), {}});
}

void
PgClient::Pipeline(std::vector<PgStatement> statements, Callback cb)
{
	impl_->Enqueue(Pending{"", {}, std::move(cb), "", std::move(statements)});
}

bool
PgClient::Connected() const
{
	return impl_->state == State::Ready;
}

void
PgClient::OnNotify(std::function<void(const std::string &channel, const std::string &payload)> fn)
{
	impl_->on_notify = std::move(fn);
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
	d->poll.Close();
	if (d->conn) {
		PQfinish(d->conn);
		d->conn = nullptr;
	}
	d->FailAll("client closed");
	d->FailRejected();
	CloseAll(std::move(done), d->poll, d->retry_timer, d->fail_timer, d->deadline_timer);
}

} // namespace chat_outboxd
