// daemon/src/net/redis_subscriber.cpp - see redis_subscriber.hpp.
//
// For developers: hiredis 0.14 keeps one callback per subscribed channel and calls it for the
// "subscribe" confirmation, every "message" and the "unsubscribe" reply; freeing a context calls
// every pending callback once with a null reply. Callbacks compare the context they are called for
// with the live one, so a reply of a context being freed never touches the new connection.
#include "net/redis_subscriber.hpp"

#include <map>
#include <strings.h>

#include "base/c_boundary.hpp"
#include "net/hiredis_link.hpp"
#include "net/hiredis_uv.hpp"

namespace chat_outboxd {

struct RedisSubscriber::Impl {
	// The link's state is ours: Up means the handshake is done and the SUBSCRIBEs are sent. A
	// redis-sentinel:// URL asks a sentinel first, then connects to the master it named, and asks
	// again after every lost connection (net/hiredis_link.hpp).
	struct Channel {
		RedisSubscriber::MessageCb on_message;
		RedisSubscriber::SubscribedCb on_subscribed;
		bool confirmed = false;
	};

	std::string name;
	StateLog state_log;
	HiredisLink link;
	std::map<std::string, Channel> channels;

	Impl(uv_loop_t *l, const chat_outbox::RedisUrl &u, std::string n, int64_t t, SentinelWatchers *w)
	    : name(std::move(n)), state_log(name),
	      link(
	          l, u, HiredisLink::Options{name, name, t, &state_log, true, {}, w},
	          [this](const RedisValue &) { Up(); }, [this](const std::string &) { Down(); })
	{
	}

	// Up: the handshake is done; every channel is subscribed (again).
	void Up()
	{
		for (auto &ch : channels)
			SendSubscribe(ch.first);
	}

	void Down()
	{
		for (auto &ch : channels)
			ch.second.confirmed = false;
	}

	void SendSubscribe(const std::string &channel)
	{
		if (!link.Send({"SUBSCRIBE", channel}, OnPubSub, this)) {
			link.Drop("SUBSCRIBE not accepted");
			return;
		}
		link.Await("subscribe");
	}

	static void OnPubSub(redisAsyncContext *c, void *r, void *privdata) noexcept
	{
		auto *self = static_cast<Impl *>(privdata);
		CallFromC(self->name.c_str(), "pub/sub reply", [&] {
			if (!r || self->link.Context() != c || !self->link.Up())
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
		link.Recovered("subscribed");
	}
};

RedisSubscriber::RedisSubscriber(uv_loop_t *loop, const chat_outbox::RedisUrl &url, std::string name,
                                 int64_t timeout_ms, SentinelWatchers *watchers)
    : impl_(std::make_unique<Impl>(loop, url, std::move(name), timeout_ms, watchers))
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
	if (d->link.Closed())
		return;
	Impl::Channel &ch = d->channels[channel];
	ch.on_message = std::move(on_message);
	ch.on_subscribed = std::move(on_subscribed);
	ch.confirmed = false;
	if (d->link.GetState() == HiredisLink::State::Idle) {
		d->link.Start();
		return;
	}
	if (d->link.Up())
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
	if (d->link.Up() && d->link.Context()) {
		(void)d->link.Send({"UNSUBSCRIBE", channel}, nullptr, nullptr);
		d->Confirmed(); // the channel left may have been the last unconfirmed one
	}
}

bool
RedisSubscriber::Subscribed(const std::string &channel) const
{
	auto it = impl_->channels.find(channel);
	return it != impl_->channels.end() && it->second.confirmed && impl_->link.Up();
}

void
RedisSubscriber::Close(std::function<void()> done)
{
	Impl *d = impl_.get();
	if (d->link.Closed()) {
		if (done)
			done();
		return;
	}
	d->channels.clear();
	d->link.Close(std::move(done));
}

} // namespace chat_outboxd
