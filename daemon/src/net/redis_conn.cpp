// daemon/src/net/redis_conn.cpp - see redis_conn.hpp.
//
// For developers: the context's life (connect, handshake, reconnect) is net/hiredis_link.hpp's and
// it is watched by our own libuv adapter (net/hiredis_uv.hpp). Every handle is a UvPoll or UvTimer
// (base/uv_handle.hpp) and every callback from hiredis or libuv runs through CallFromC.
#include "net/redis_conn.hpp"

#include <list>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "base/c_boundary.hpp"
#include "base/uv_timer.hpp"
#include "net/deferred_replies.hpp"
#include "net/hiredis_link.hpp"
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
		RedisCommands::ReplyCb cb;
		uint64_t deadline;
		std::list<Call *>::iterator it;
	};

	uv_loop_t *loop;
	std::string role;
	int64_t timeout_ms;
	HiredisLink link; // the context, its handshake (ending with CLIENT ID) and the reconnects
	bool ready = false;
	int64_t client_id = 0;
	DeferredReplies deferred; // failures delivered on the next tick
	std::list<Call *> pending;
	std::vector<std::function<void()>> on_ready; // every listener, in the order they were added
	std::function<void()> on_down;

	Impl(uv_loop_t *l, chat_outbox::RedisUrl u, std::string r, std::string n, int64_t t, StateLog *s,
	     SentinelWatchers *w)
	    : loop(l), role(r), timeout_ms(t),
	      link(
	          l, u, HiredisLink::Options{std::move(r), std::move(n), t, s, false, {{"CLIENT", "ID"}}, w},
	          [this](const RedisValue &last) { Up(last); }, [this](const std::string &) { Down(); }),
	      deferred(l, "redis deferred failures")
	{
		link.OnTick([this] { Watchdog(); }); // each command's deadline, on the link's timer
	}

	// Up: the handshake is done; its last reply is our CLIENT ID.
	void Up(const RedisValue &client_id_reply)
	{
		client_id = client_id_reply.integer;
		ready = true;
		link.Recovered();
		for (auto &cb : on_ready)
			cb();
	}

	void Down()
	{
		bool was_ready = ready;
		ready = false;
		if (was_ready && on_down)
			on_down();
	}

	// Send queues a command on the live context.
	void Send(const std::vector<std::string> &argv, RedisCommands::ReplyCb cb, int64_t timeout)
	{
		if (!link.Context()) {
			Defer(std::move(cb), "not connected");
			return;
		}
		auto *call = new Call{this, std::move(cb), NowMs(loop) + static_cast<uint64_t>(timeout), {}};
		pending.push_back(call);
		call->it = std::prev(pending.end());
		if (!link.Send(argv, OnReply, call)) {
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
		CallFromC(self->role.c_str(), "reply", [&] {
			if (!r) {
				self->ready = false; // the context is going away: new commands must not reach it
				std::string why = self->link.DropReason().empty() ? "connection lost" : self->link.DropReason();
				if (call->cb)
					call->cb(nullptr, why);
				return;
			}
			RedisValue v = ConvertReply(static_cast<const redisReply *>(r));
			if (v.IsError())
				self->link.CommandError(v.str); // READONLY: the master moved under us
			if (call->cb)
				call->cb(&v, "");
		});
	}

	void Defer(RedisCommands::ReplyCb cb, std::string why) { deferred.Add(std::move(cb), std::move(why)); }

	// Watchdog drops the connection when a command outlives its deadline (the link watches
	// connecting and the handshake).
	void Watchdog()
	{
		uint64_t now = NowMs(loop);
		for (Call *c : pending)
			if (now > c->deadline) {
				link.Drop("command timed out");
				return;
			}
	}
};

RedisConn::RedisConn(uv_loop_t *loop, chat_outbox::RedisUrl url, std::string role, std::string client_name,
                     int64_t timeout_ms, StateLog *state_log, SentinelWatchers *watchers)
    : impl_(std::make_unique<Impl>(loop, std::move(url), std::move(role), std::move(client_name), timeout_ms,
                                   state_log, watchers))
{
}

RedisConn::~RedisConn()
{
	// Without a Close the hiredis context would outlive us and call into freed memory. Its callers
	// may be gone already: nobody is told.
	if (!impl_->link.Closed()) {
		impl_->on_ready.clear();
		impl_->on_down = nullptr;
		for (Impl::Call *c : impl_->pending)
			c->cb = nullptr;
		impl_->deferred.Forget();
		Close(nullptr);
	}
}

void
RedisConn::Start()
{
	Impl *d = impl_.get();
	if (d->link.GetState() != HiredisLink::State::Idle)
		return;
	d->link.Start();
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
RedisConn::Drop(const std::string &why)
{
	impl_->link.Drop(why);
}

void
RedisConn::Close(std::function<void()> done)
{
	Impl *d = impl_.get();
	if (d->link.Closed())
		return;
	d->ready = false;
	d->link.Shut();
	d->deferred.Closing();
	CloseAll(std::move(done), d->link, d->deferred);
}

} // namespace chat_outboxd
