// daemon/src/net/redis_subscriber.hpp - one Redis pub/sub connection on the libuv loop.
//
// A subscriber connection is in subscribe mode: it carries no other commands (publishing goes over
// an ordinary RedisConn with Command({"PUBLISH", channel, payload})). It connects (TCP or unix
// socket), authenticates and SELECTs as the URL says, names itself (CLIENT SETNAME), subscribes
// every channel asked for, and keeps them: a lost connection (Redis restarted, CLIENT KILL, a
// network error, a handshake or subscribe that outlives its deadline) reconnects with backoff and
// subscribes again. A redis-sentinel:// URL asks its sentinels for the master before every connect,
// as RedisConn does (both live on net/hiredis_link.hpp), so the subscriptions follow a failover.
// Pub/sub delivers at most once: what was published while the connection was down is lost, so
// on_subscribed runs after every (re)subscribe and its owner reads what it may have missed from its
// record. Up/down changes are logged once per cause of an outage (StateLog). TCP keepalive finds a silent peer;
// the connection sends no PING of its own (a PING reply in subscribe mode could be taken for a
// message by hiredis 0.14).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <uv.h>

#include "base/log.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

class SentinelWatchers;

class RedisSubscriber {
  public:
	using MessageCb = std::function<void(const std::string &channel, const std::string &payload)>;
	using SubscribedCb = std::function<void()>;

	// name is the CLIENT SETNAME and the name in the log; timeout_ms bounds connecting, the
	// handshake and each subscribe confirmation; watchers is the daemon's Sentinel watch, which a
	// redis-sentinel:// URL's connection follows (net/sentinel_watchers.hpp). The connection opens at
	// the first Subscribe.
	RedisSubscriber(uv_loop_t *loop, const chat_outbox::RedisUrl &url, std::string name, int64_t timeout_ms,
	                SentinelWatchers *watchers);
	~RedisSubscriber();
	RedisSubscriber(const RedisSubscriber &) = delete;
	RedisSubscriber &operator=(const RedisSubscriber &) = delete;

	// Subscribe keeps channel subscribed until Unsubscribe or Close. on_message runs for every
	// message published on it; on_subscribed after every confirmation of the subscription (first
	// time and after each reconnect): traffic published before it may have been missed. Subscribing
	// a channel again replaces its callbacks. Callbacks never run inside this call.
	void Subscribe(const std::string &channel, MessageCb on_message, SubscribedCb on_subscribed);
	// Unsubscribe stops the channel's callbacks at once.
	void Unsubscribe(const std::string &channel);
	// Subscribed: the channel's subscription is confirmed on the live connection.
	bool Subscribed(const std::string &channel) const;
	// Close drops the connection and its timers; done runs once every uv handle is closed. No
	// callback runs after Close.
	void Close(std::function<void()> done);

	struct Impl;

  private:
	std::unique_ptr<Impl> impl_;
};

} // namespace chat_outboxd
