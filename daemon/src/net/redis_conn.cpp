// daemon/src/net/redis_conn.cpp - see redis_conn.hpp.
//
// For developers: the context is watched by our own libuv adapter (net/hiredis_uv.hpp). Every
// handle is a UvPoll or UvTimer (base/uv_handle.hpp) and every callback from hiredis or libuv runs
// through CallFromC.
#include "net/redis_conn.hpp"

#include <list>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "backoff.hpp"
#include "base/c_boundary.hpp"
#include "base/uv_timer.hpp"
#include "net/core/sentinel_route.hpp"
#include "net/hiredis_uv.hpp"

namespace chat_outboxd {

namespace {

uint64_t
NowMs(uv_loop_t *loop)
{
	return uv_now(loop);
}

} // namespace

struct RedisConn::Impl {
	struct Call {
		Impl *owner;
		RedisConn::ReplyCb cb;
		uint64_t deadline;
		std::list<Call *>::iterator it;
	};

	uv_loop_t *loop;
	SentinelRoute route;    // a redis-sentinel:// URL asks a sentinel first, then connects to the master
	bool switching = false; // the sentinel's context is closed on purpose, to connect to the master
	std::string role, client_name;
	int64_t timeout_ms;
	StateLog *state_log;
	redisAsyncContext *ac = nullptr;
	bool ready = false, closing = false, started = false;
	uint64_t connect_deadline = 0;
	int64_t client_id = 0;
	std::string drop_reason;
	chat_outbox::Backoff backoff{50, 5000};
	UvTimer retry_timer, watchdog, defer_timer;
	std::list<Call *> pending;
	std::list<std::pair<RedisConn::ReplyCb, std::string>> deferred; // failures delivered on the next tick
	std::vector<std::function<void()>> on_ready; // every listener, in the order they were added
	std::function<void()> on_down;

	Impl(uv_loop_t *l, chat_outbox::RedisUrl u, std::string r, std::string n, int64_t t, StateLog *s)
	    : loop(l), route(std::move(u)), role(std::move(r)), client_name(std::move(n)), timeout_ms(t), state_log(s),
	      retry_timer(l, "redis reconnect"), watchdog(l, "redis watchdog"), defer_timer(l, "redis deferred failures")
	{
	}

	template <typename F>
	void Guard(const char *where, F &&f) noexcept
	{
		CallFromC(role.c_str(), where, std::forward<F>(f));
	}

	void Connect()
	{
		std::string why;
		redisAsyncContext *c = OpenContext(loop, route.Next(), this, OnConnect, OnDisconnect, &why);
		if (!c) {
			ScheduleRetry(why);
			return;
		}
		ac = c;
		connect_deadline = NowMs(loop) + static_cast<uint64_t>(timeout_ms);
	}

	static void OnConnect(const redisAsyncContext *c, int status) noexcept
	{
		auto *self = static_cast<Impl *>(c->data);
		self->Guard("connect", [&] {
			if (self->ac != c)
				return;
			if (status != REDIS_OK) {
				self->ac = nullptr; // hiredis frees a context whose connect failed
				self->Gone(c->errstr);
				return;
			}
			self->connect_deadline = 0;
			if (self->route.Asking())
				self->AskSentinel();
			else
				self->Handshake();
		});
	}

	static void OnDisconnect(const redisAsyncContext *c, int status) noexcept
	{
		auto *self = static_cast<Impl *>(c->data);
		self->Guard("disconnect", [&] {
			if (self->ac != c)
				return;
			self->ac = nullptr;
			self->Gone(status == REDIS_OK ? (self->drop_reason.empty() ? "closed" : self->drop_reason)
			                              : std::string(c->errstr));
		});
	}

	// Gone records a lost connection (the context is already gone or going) and plans a retry.
	void Gone(const std::string &why)
	{
		bool was_ready = ready;
		ready = false;
		ac = nullptr;
		connect_deadline = 0;
		if (closing)
			return;
		if (switching) {
			switching = false;
			retry_timer.Start(0, [this] {
				if (!ac && !closing)
					Connect();
			});
			return;
		}
		route.Lost();
		if (was_ready && on_down)
			on_down();
		ScheduleRetry(why);
	}

	void ScheduleRetry(const std::string &why)
	{
		if (closing)
			return;
		if (state_log)
			state_log->Down(why);
		else if (backoff.Failures() == 0)
			Log(Level::Verbose, "%s: %s (reconnecting)", role.c_str(), why.c_str());
		retry_timer.Start(static_cast<uint64_t>(backoff.Next()), [this] {
			if (!ac && !closing)
				Connect();
		});
	}

	// AskSentinel pipelines the sentinel query; the address in the last reply becomes the target,
	// and the sentinel's context is closed to connect there.
	void AskSentinel()
	{
		auto cmds = route.Commands();
		auto failed = std::make_shared<bool>(false);
		for (size_t i = 0; i < cmds.size(); i++) {
			bool last = i + 1 == cmds.size();
			std::string what = cmds[i][0];
			Send(cmds[i],
			     [this, last, what, failed](const RedisValue *r, const std::string &) {
				     if (*failed)
					     return;
				     if (!r || (!last && r->IsError())) {
					     *failed = true;
					     if (r)
						     DropContext("sentinel " + what + " failed: " + r->str);
					     return;
				     }
				     if (!last)
					     return;
				     std::string why, notice;
				     if (!route.Found(*r, &why, &notice)) {
					     DropContext(why);
					     return;
				     }
				     if (!notice.empty())
					     Log(Level::Notice, "%s: %s", role.c_str(), notice.c_str());
				     switching = true;
				     DropContext("connecting to the master");
			     },
			     timeout_ms);
		}
	}

	// Handshake pipelines the shared handshake (AUTH, SELECT), ROLE (when the address came from a
	// sentinel, which may be stale), CLIENT SETNAME and CLIENT ID; the last reply makes us ready.
	void Handshake()
	{
		std::vector<std::vector<std::string>> cmds = route.Commands();
		cmds.push_back({"CLIENT", "SETNAME", client_name});
		cmds.push_back({"CLIENT", "ID"});
		auto failed = std::make_shared<bool>(false);
		for (size_t i = 0; i < cmds.size(); i++) {
			bool last = i + 1 == cmds.size();
			std::string what = cmds[i][0] == "CLIENT" ? "CLIENT " + cmds[i][1] : cmds[i][0];
			Send(cmds[i],
			     [this, last, what, failed](const RedisValue *r, const std::string &err) {
				     if (*failed)
					     return;
				     if (!r || r->IsError()) {
					     *failed = true;
					     std::string why = what + " failed: " + (r ? r->str : err);
					     Log(Level::Debug, "%s: %s", role.c_str(), why.c_str());
					     if (r)
						     DropContext(why);
					     return;
				     }
				     if (what == "ROLE" && !route.RoleOk(*r)) {
					     *failed = true;
					     DropContext("ROLE: " + route.Master() + " is not the master (yet)");
					     return;
				     }
				     if (!last)
					     return;
				     client_id = r->integer;
				     ready = true;
				     backoff.Reset();
				     if (state_log)
					     state_log->Up();
				     else
					     Log(Level::Verbose, "%s: connected", role.c_str());
				     for (auto &cb : on_ready)
					     cb();
			     },
			     timeout_ms);
		}
	}

	// Send queues a command on the live context, bypassing the ready check (used by the handshake).
	void Send(const std::vector<std::string> &argv, RedisConn::ReplyCb cb, int64_t timeout)
	{
		if (!ac) {
			Defer(std::move(cb), "not connected");
			return;
		}
		std::vector<const char *> args;
		std::vector<size_t> lens;
		for (const auto &a : argv) {
			args.push_back(a.data());
			lens.push_back(a.size());
		}
		auto *call = new Call{this, std::move(cb), NowMs(loop) + static_cast<uint64_t>(timeout), {}};
		pending.push_back(call);
		call->it = std::prev(pending.end());
		if (redisAsyncCommandArgv(ac, OnReply, call, static_cast<int>(args.size()), args.data(), lens.data()) !=
		    REDIS_OK) {
			pending.erase(call->it);
			Defer(std::move(call->cb), "command not accepted (connection closing)");
			delete call;
		}
	}

	static void OnReply(redisAsyncContext *, void *r, void *privdata) noexcept
	{
		auto *call = static_cast<Call *>(privdata);
		Impl *self = call->owner;
		self->pending.erase(call->it);
		std::unique_ptr<Call> own(call);
		self->Guard("reply", [&] {
			if (!r) {
				self->ready = false; // the context is going away: new commands must not reach it
				std::string why = self->drop_reason.empty() ? "connection lost" : self->drop_reason;
				if (call->cb)
					call->cb(nullptr, why);
				return;
			}
			RedisValue v = ConvertReply(static_cast<const redisReply *>(r));
			if (call->cb)
				call->cb(&v, "");
		});
	}

	void Defer(RedisConn::ReplyCb cb, std::string why)
	{
		if (closing) {
			// Close already flushed the deferred list; answer right away rather than never.
			if (cb)
				cb(nullptr, why);
			return;
		}
		deferred.emplace_back(std::move(cb), std::move(why));
		defer_timer.Start(0, [this] { FlushDeferred(); });
	}

	void FlushDeferred()
	{
		auto list = std::move(deferred);
		deferred.clear();
		for (auto &d : list)
			if (d.first)
				d.first(nullptr, d.second);
	}

	void Watchdog()
	{
		uint64_t now = NowMs(loop);
		if (ac && connect_deadline && now > connect_deadline) {
			DropContext("connect timed out");
			return;
		}
		for (Call *c : pending)
			if (now > c->deadline) {
				DropContext("command timed out");
				return;
			}
	}

	// DropContext frees the live context: pending callbacks get nullptr, then Gone plans a retry.
	void DropContext(const std::string &why)
	{
		if (!ac)
			return;
		drop_reason = why;
		redisAsyncContext *c = ac;
		redisAsyncFree(c); // runs OnDisconnect if it was connected (then ac is already null)
		if (ac == c) {
			ac = nullptr;
			Gone(why);
		}
		drop_reason.clear();
	}
};

RedisConn::RedisConn(uv_loop_t *loop, chat_outbox::RedisUrl url, std::string role, std::string client_name,
                     int64_t timeout_ms, StateLog *state_log)
    : impl_(std::make_unique<Impl>(loop, std::move(url), std::move(role), std::move(client_name), timeout_ms,
                                   state_log))
{
}

RedisConn::~RedisConn()
{
	// Without a Close the hiredis context would outlive us and call into freed memory. Its callers
	// may be gone already: nobody is told.
	if (!impl_->closing) {
		impl_->on_ready.clear();
		impl_->on_down = nullptr;
		for (Impl::Call *c : impl_->pending)
			c->cb = nullptr;
		for (auto &d : impl_->deferred)
			d.first = nullptr;
		Close(nullptr);
	}
}

void
RedisConn::Start()
{
	if (impl_->started)
		return;
	impl_->started = true;
	Impl *d = impl_.get();
	d->watchdog.Start(100, [d] { d->Watchdog(); }, 100);
	impl_->Connect();
}

bool
RedisConn::Ready() const
{
	return impl_->ready;
}

void
RedisConn::OnReady(std::function<void()> on_ready)
{
	impl_->on_ready.push_back(std::move(on_ready));
}

void
RedisConn::OnDown(std::function<void()> on_down)
{
	impl_->on_down = std::move(on_down);
}

int64_t
RedisConn::ClientId() const
{
	return impl_->client_id;
}

void
RedisConn::Command(std::vector<std::string> argv, ReplyCb cb, int64_t timeout_ms)
{
	if (!impl_->ready) {
		impl_->Defer(std::move(cb), "not connected to redis");
		return;
	}
	impl_->Send(argv, std::move(cb), timeout_ms > 0 ? timeout_ms : impl_->timeout_ms);
}

void
RedisConn::Eval(const chat_outbox::ScriptCall &call, ReplyCb cb, int64_t timeout_ms)
{
	auto fallback = std::make_shared<std::vector<std::string>>(chat_outbox::EvalArgv(call));
	Command(chat_outbox::EvalShaArgv(call),
	        [this, fallback, cb = std::move(cb)](const RedisValue *r, const std::string &err) {
		        if (r && r->IsError() && chat_outbox::IsNoScriptError(r->str)) {
			        Command(std::move(*fallback), cb);
			        return;
		        }
		        cb(r, err);
	        },
	        timeout_ms);
}

void
RedisConn::Drop(const std::string &why)
{
	impl_->DropContext(why);
}

void
RedisConn::Close(std::function<void()> done)
{
	Impl *d = impl_.get();
	if (d->closing)
		return;
	d->closing = true;
	d->ready = false;
	if (d->ac) {
		d->drop_reason = "closing";
		redisAsyncContext *c = d->ac;
		d->ac = nullptr;
		redisAsyncFree(c);
	}
	d->FlushDeferred();
	CloseAll(std::move(done), d->retry_timer, d->watchdog, d->defer_timer);
}

} // namespace chat_outboxd
