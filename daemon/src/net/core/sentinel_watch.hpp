// daemon/src/net/core/sentinel_watch.hpp - what one daemon's watch of a set of sentinels decides: the
// one connection (net/sentinel_watchers.hpp) that tells every Redis connection of a redis-sentinel://
// URL where the sentinels name its master now.
//
// Rules:
// - One watch per set of sentinels (Key: the sentinels, their credentials and TLS), whatever the number
//   of connections and master names: its connection subscribes to Channels() on one sentinel, and
//   each connection judges the news for itself (SentinelRoute::SwitchedAway).
// - The watch goes to the sentinels in turn (SentinelRoute::ToSentinels): a lost watch moves to the
//   next one, with the connection's backoff. A watch that comes up asks its sentinel where each
//   subscribed master is (AskCommand, Answer) before it subscribes: an announcement made while it
//   was down would otherwise be missed until Sentinel demoted the old master.
// - Its state is logged once per change (Up, Down): which sentinel it watches, and the first reason
//   of an outage, not every failed attempt of it.
//
// Pure: no I/O, unit-tested without servers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "net/core/redis_value.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

// MasterNews: the sentinels name master `name` at `address` ("host:port"); `source` says how we
// learnt it (the channel, or the query after a reconnect), for the log.
struct MasterNews {
	std::string name;
	std::string address;
	std::string source;
};

class SentinelWatch {
  public:
	// Idle: not started; Watching: subscribed on a sentinel; Lost: no sentinel watched (retrying).
	enum class State { kIdle,
		               kWatching,
		               kLost };

	// Key: URLs with the same key share one watch (a redis-sentinel:// URL's sentinels, sentinel
	// credentials and TLS; not its master name, db or master credentials).
	static std::string Key(const chat_outbox::RedisUrl &url);
	// Channels: the sentinels' channels that announce a new master: +switch-master (every sentinel,
	// once the failover is over: after the other replicas were reconfigured, seconds later with
	// several) and +promoted-slave (the leading sentinel only, as soon as it sees the promotion, from
	// when its get-master-addr-by-name names the new master).
	static std::vector<std::string> Channels() { return {"+switch-master", "+promoted-slave"}; }
	// Announcement reads a message of a Channels() channel (+switch-master: "<name> <old ip> <old
	// port> <new ip> <new port>"; +promoted-slave: "slave <ip>:<port> <ip> <port> @ <name> <master
	// ip> <master port>"): the master it names and where; nullopt for any other form.
	static std::optional<MasterNews> Announcement(const std::string &channel, const std::string &payload);
	// AskCommand: where the sentinel names master `name` now; Answer reads its reply (nullopt for an
	// error, a nil: a sentinel that does not know it, or another form).
	static std::vector<std::string> AskCommand(const std::string &name);
	static std::optional<MasterNews> Answer(const std::string &name, const RedisValue &reply);

	State GetState() const { return state_; }
	// Up: the watch is subscribed on `sentinel` ("host:port"); returns the line to log ("" when
	// nothing changed: the same sentinel, watched already).
	std::string Up(const std::string &sentinel);
	// Down: the watch on `sentinel` was lost or could not be made (why); returns the line to log,
	// once per outage: "" while it is lost already.
	std::string Down(const std::string &sentinel, const std::string &why);

  private:
	State state_ = State::kIdle;
	std::string watched_; // the sentinel last watched
};

} // namespace chat_outboxd
