// daemon/src/net/sentinel_watchers.hpp - the daemon's watch of Sentinel: one connection per set of
// sentinels (in practice one per daemon), which every Redis connection of a redis-sentinel:// URL
// subscribes to (HiredisLink, at its Start), instead of a watch of its own.
//
// A watch is the one owner of its connection (a HiredisLink on SentinelRoute::ToSentinels, named
// "<client name>:sentinel-watch" so CLIENT LIST on a sentinel shows it): it connects at its first
// subscriber, asks its sentinel where each subscribed master is, then subscribes to the sentinels'
// announcements of a new master (net/core/sentinel_watch.hpp has the rules). Every news goes to every
// subscriber of that master's URL set, which judges it (SentinelRoute::SwitchedAway) and leaves a
// master the sentinels no longer name, at once. A lost watch moves to the next sentinel with backoff,
// logged once per state change. Subscribers' callbacks run from the loop, never inside Subscribe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <uv.h>

#include "net/core/sentinel_watch.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

class SentinelWatchers {
  public:
	using NewsCb = std::function<void(const MasterNews &news)>;

	// client_name: the daemon's connection name (the watch adds ":sentinel-watch"); timeout_ms bounds
	// connecting, the handshake and the subscribe confirmations.
	SentinelWatchers(uv_loop_t *loop, std::string client_name, int64_t timeout_ms);
	~SentinelWatchers();
	SentinelWatchers(const SentinelWatchers &) = delete;
	SentinelWatchers &operator=(const SentinelWatchers &) = delete;

	// Subscribe: on_news runs with every news of url's sentinels (url: a redis-sentinel:// URL) about
	// url's master. Returns the id for Unsubscribe (0 after Close: nothing is watched).
	uint64_t Subscribe(const chat_outbox::RedisUrl &url, NewsCb on_news);
	// Unsubscribe stops the callback at once (the watch stays, for the next subscriber).
	void Unsubscribe(uint64_t id);
	// Close drops every watch; done runs once every uv handle is closed. No callback runs after it.
	void Close(std::function<void()> done);

	struct Watch;

  private:
	uv_loop_t *loop_;
	std::string client_name_;
	int64_t timeout_ms_;
	bool closed_ = false;
	uint64_t next_id_ = 1;
	std::map<std::string, std::unique_ptr<Watch>> watches_; // by SentinelWatch::Key
};

} // namespace chat_outboxd
