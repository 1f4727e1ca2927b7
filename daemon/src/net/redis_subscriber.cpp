// daemon/src/net/redis_subscriber.cpp - see redis_subscriber.hpp.
//
// For developers: hiredis 0.14 keeps one callback per subscribed channel and calls it for the
// "subscribe" confirmation, every "message" and the "unsubscribe" reply; freeing a context calls
// every pending callback once with a null reply. Callbacks compare the context they are called for
// with the live one, so a reply of a context being freed never touches the new connection.
#include "net/redis_subscriber.hpp"

#include <map>
#include <strings.h>

#include "backoff.hpp"
#include "base/c_boundary.hpp"
#include "base/uv_handle.hpp"
#include "base/uv_timer.hpp"
#include "net/core/sentinel_route.hpp"
#include "net/hiredis_uv.hpp"

namespace chat_outboxd {

namespace {

// kWatchdogMs: how often deadlines are checked (they are whole seconds, so this is fine grained).
constexpr uint64_t kWatchdogMs = 100;

} // namespace

struct RedisSubscriber::Impl {
	// Down: no context (waiting to connect or to retry); Connecting: TCP connect under way;
	// Handshaking: AUTH/SELECT/SETNAME sent (or, to a sentinel, its query); Up: handshake done,
	// SUBSCRIBEs sent; Closed: Close ran. A redis-sentinel:// URL asks a sentinel first (route), then
	// connects to the master it named, and asks again after every lost connection.
	enum class State { Down, Connecting, Handshaking, Up, Closed };

	struct Channel {
		RedisSubscriber::MessageCb on_message;
		RedisSubscriber::SubscribedCb on_subscribed;
		bool confirmed = false;
	};

	// HandshakeStep is the privdata of one handshake command; freed by its callback.
	struct HandshakeStep {
		Impl *owner;
		bool last;
		std::string what;
	};

	uv_loop_t *loop;
	SentinelRoute route;
	bool switching = false; // the sentinel's context is closed on purpose, to connect to the master
	std::string name;
	int64_t timeout_ms;
	StateLog state_log;
	State state = State::Down;
	bool started = false;
	redisAsyncContext *ac = nullptr;
	uint64_t deadline = 0; // 0: nothing awaited
	std::string deadline_what;
	std::string drop_reason;
	chat_outbox::Backoff backoff{50, 5000};
	UvTimer retry_timer, watchdog;
	std::map<std::string, Channel> channels;

	Impl(uv_loop_t *l, const chat_outbox::RedisUrl &u, std::string n, int64_t t)
	    : loop(l), route(u), name(std::move(n)), timeout_ms(t), state_log(name), retry_timer(l, "redis subscriber reconnect"),
	      watchdog(l, "redis subscriber watchdog")
	{
	}

	template <typename F>
	void Guard(const char *where, F &&f) noexcept
	{
		CallFromC(name.c_str(), where, std::forward<F>(f));
	}

	void Await(const char *what)
	{
		if (deadline)
			return;
		deadline = uv_now(loop) + static_cast<uint64_t>(timeout_ms);
		deadline_what = what;
	}

	void Connect()
	{
		if (state != State::Down)
			return;
		std::string why;
		redisAsyncContext *c = OpenContext(loop, route.Next(), this, OnConnect, OnDisconnect, &why);
		if (!c) {
			Gone(why);
			return;
		}
		ac = c;
		state = State::Connecting;
		deadline = 0;
		Await("connect");
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
			if (!self->route.Asking() && self->route.Next().unix_socket.empty())
				redisEnableKeepAlive(&self->ac->c);
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

	void Handshake()
	{
		state = State::Handshaking;
		std::vector<std::vector<std::string>> cmds = route.Commands();
		if (!route.Asking())
			cmds.push_back({"CLIENT", "SETNAME", name});
		for (size_t i = 0; i < cmds.size(); i++) {
			auto *step = new HandshakeStep{this, i + 1 == cmds.size(),
			                               cmds[i][0] == "CLIENT" ? "CLIENT " + cmds[i][1] : cmds[i][0]};
			if (!SendArgv(cmds[i], OnHandshakeReply, step)) {
				delete step;
				DropContext("command not accepted");
				return;
			}
		}
	}

	bool SendArgv(const std::vector<std::string> &argv, redisCallbackFn *fn, void *privdata)
	{
		std::vector<const char *> args;
		std::vector<size_t> lens;
		for (const auto &a : argv) {
			args.push_back(a.data());
			lens.push_back(a.size());
		}
		return redisAsyncCommandArgv(ac, fn, privdata, static_cast<int>(args.size()), args.data(), lens.data()) ==
		       REDIS_OK;
	}

	static void OnHandshakeReply(redisAsyncContext *c, void *r, void *privdata) noexcept
	{
		std::unique_ptr<HandshakeStep> step(static_cast<HandshakeStep *>(privdata));
		Impl *self = step->owner;
		self->Guard("handshake", [&] {
			if (!r || self->ac != c || self->state != State::Handshaking)
				return;
			auto *reply = static_cast<redisReply *>(r);
			bool asking = self->route.Asking();
			if (reply->type == REDIS_REPLY_ERROR && !(asking && step->last)) {
				std::string why = step->what + " failed: " + std::string(reply->str, reply->len);
				self->DropContext(why);
				return;
			}
			if (step->what == "ROLE" && !self->route.RoleOk(ConvertReply(reply))) {
				self->DropContext("ROLE: " + self->route.Master() + " is not the master (yet)");
				return;
			}
			if (!step->last)
				return;
			if (asking) {
				std::string why, notice;
				if (!self->route.Found(ConvertReply(reply), &why, &notice)) {
					self->DropContext(why);
					return;
				}
				if (!notice.empty())
					Log(Level::Notice, "%s: %s", self->name.c_str(), notice.c_str());
				self->switching = true;
				self->DropContext("connecting to the master");
				return;
			}
			self->state = State::Up;
			self->deadline = 0;
			for (auto &ch : self->channels)
				self->SendSubscribe(ch.first);
		});
	}

	void SendSubscribe(const std::string &channel)
	{
		if (!SendArgv({"SUBSCRIBE", channel}, OnPubSub, this)) {
			DropContext("SUBSCRIBE not accepted");
			return;
		}
		Await("subscribe");
	}

	static void OnPubSub(redisAsyncContext *c, void *r, void *privdata) noexcept
	{
		auto *self = static_cast<Impl *>(privdata);
		self->Guard("pub/sub reply", [&] {
			if (!r || self->ac != c || self->state != State::Up)
				return;
			RedisValue v = ConvertReply(static_cast<const redisReply *>(r));
			if (v.type != RedisValue::Type::Array || v.elements.size() < 3 ||
			    v.elements[0].type != RedisValue::Type::String || v.elements[1].type != RedisValue::Type::String)
				return;
			const std::string &kind = v.elements[0].str, &channel = v.elements[1].str;
			auto it = self->channels.find(channel);
			if (it == self->channels.end())
				return; // unsubscribed meanwhile
			if (strcasecmp(kind.c_str(), "message") == 0) {
				MessageCb cb = it->second.on_message; // a copy: the callback may unsubscribe
				if (cb)
					cb(channel, v.elements[2].str);
			} else if (strcasecmp(kind.c_str(), "subscribe") == 0) {
				it->second.confirmed = true;
				SubscribedCb cb = it->second.on_subscribed;
				self->Confirmed();
				Log(Level::Verbose, "%s: subscribed to %s", self->name.c_str(), channel.c_str());
				if (cb)
					cb();
			}
		});
	}

	// Confirmed: a subscription was confirmed; once all are, the outage (if any) is over.
	void Confirmed()
	{
		for (auto &ch : channels)
			if (!ch.second.confirmed)
				return;
		deadline = 0;
		backoff.Reset();
		state_log.Up("subscribed");
	}

	// Gone records a lost connection (the context is already gone or going) and plans a retry.
	void Gone(const std::string &why)
	{
		ac = nullptr;
		deadline = 0;
		for (auto &ch : channels)
			ch.second.confirmed = false;
		if (state == State::Closed)
			return;
		state = State::Down;
		if (switching) {
			switching = false;
			retry_timer.Start(0, [this] { Connect(); });
			return;
		}
		route.Lost();
		state_log.Down(why);
		retry_timer.Start(static_cast<uint64_t>(backoff.Next()), [this] { Connect(); });
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

	void Watchdog()
	{
		if (ac && deadline && uv_now(loop) > deadline)
			DropContext(deadline_what + " timed out");
	}
};

RedisSubscriber::RedisSubscriber(uv_loop_t *loop, const chat_outbox::RedisUrl &url, std::string name,
                                 int64_t timeout_ms)
    : impl_(std::make_unique<Impl>(loop, url, std::move(name), timeout_ms))
{
}

RedisSubscriber::~RedisSubscriber()
{
	// Without a Close the hiredis context would outlive us and call into freed memory.
	Close(nullptr);
}

void
RedisSubscriber::Subscribe(const std::string &channel, MessageCb on_message, SubscribedCb on_subscribed)
{
	Impl *d = impl_.get();
	if (d->state == Impl::State::Closed)
		return;
	Impl::Channel &ch = d->channels[channel];
	ch.on_message = std::move(on_message);
	ch.on_subscribed = std::move(on_subscribed);
	ch.confirmed = false;
	if (!d->started) {
		d->started = true;
		d->watchdog.Start(kWatchdogMs, [d] { d->Watchdog(); }, kWatchdogMs);
		d->retry_timer.Start(0, [d] { d->Connect(); });
		return;
	}
	if (d->state == Impl::State::Up)
		d->SendSubscribe(channel);
}

void
RedisSubscriber::Unsubscribe(const std::string &channel)
{
	Impl *d = impl_.get();
	auto it = d->channels.find(channel);
	if (it == d->channels.end())
		return;
	d->channels.erase(it);
	// hiredis refuses UNSUBSCRIBE on a context that is not in subscribe mode; then there is nothing to undo.
	if (d->state == Impl::State::Up && d->ac) {
		(void)d->SendArgv({"UNSUBSCRIBE", channel}, nullptr, nullptr);
		d->Confirmed(); // the channel left may have been the last unconfirmed one
	}
}

bool
RedisSubscriber::Subscribed(const std::string &channel) const
{
	auto it = impl_->channels.find(channel);
	return it != impl_->channels.end() && it->second.confirmed && impl_->state == Impl::State::Up;
}

void
RedisSubscriber::Close(std::function<void()> done)
{
	Impl *d = impl_.get();
	if (d->state == Impl::State::Closed) {
		if (done)
			done();
		return;
	}
	d->state = Impl::State::Closed;
	d->channels.clear();
	if (d->ac) {
		d->drop_reason = "closing";
		redisAsyncContext *c = d->ac;
		d->ac = nullptr;
		redisAsyncFree(c);
	}
	CloseAll(std::move(done), d->retry_timer, d->watchdog);
}

} // namespace chat_outboxd
