// daemon/src/net/core/sentinel_route.hpp - where an async Redis connection of the daemon goes next.
//
// HiredisLink (net/hiredis_link.hpp, the connection life of RedisConn and RedisSubscriber) follows
// it, so both follow a failover the same way (common/redis_sentinel has the rule). A plain URL
// always goes to its own address. A redis-sentinel:// URL alternates two phases: asking
// url.sentinels[cursor] for the master (a short-lived connection: SentinelQuery commands, then
// Found with the last reply), and connecting to the master it named (the handshake with ROLE,
// checked by RoleOk). Every lost connection goes back to asking; a sentinel that failed, or named
// something that is not the master, moves the cursor on. A redis-cluster:// URL (used so only by
// RedisSubscriber: any node of a cluster serves its classic pub/sub) goes to one seed node, and to
// the next one after each lost connection. ToSentinels is the route of the daemon's Sentinel watch
// (net/core/sentinel_watch.hpp): to a sentinel itself, with the sentinel credentials, and to the next
// one after each lost connection.
//
// While connected to a master a sentinel's URL still follows Sentinel: a master that is failed over
// while it stays up (SENTINEL FAILOVER, or a second failover of a just-promoted master) keeps its
// clients, and stays writable, until Sentinel reconfigures it as a replica seconds later. So the
// link hears the sentinels' news of a new master from the daemon's one Sentinel watch
// (net/sentinel_watchers.hpp) and judges it (SwitchedAway), and takes a READONLY or UNBLOCKED error
// on a command for the same news (MasterMovedError): either sends the link back to asking.
//
// Pure: no I/O, unit-tested without servers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "net/core/redis_value.hpp"
#include "net/core/sentinel_watch.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

class SentinelRoute {
  public:
	explicit SentinelRoute(chat_outbox::RedisUrl url);
	// ToSentinels: the route to url's sentinels themselves (url: a redis-sentinel:// URL), from the
	// first, moving to the next after each lost connection; the handshake authenticates with the
	// sentinel credentials. Never Asking, never Watching.
	static SentinelRoute ToSentinels(const chat_outbox::RedisUrl &url);

	// Asking: the next connection is to a sentinel (Next() is that sentinel's address).
	bool Asking() const { return phase_ == Phase::kAskSentinel; }
	// Next: the address to connect to now (a sentinel while Asking, else the master or the plain URL).
	chat_outbox::RedisUrl Next() const;
	// Commands: what to send first on the connection to Next(): the sentinel query while Asking, else
	// the handshake (AUTH, SELECT) and, for a discovered master, ROLE last.
	std::vector<std::vector<std::string>> Commands() const;
	// Found takes the reply to the sentinel query's last command. true: the next connection goes to
	// the master it named (*notice is set when that address is new, for the log). false: *why says
	// what the sentinel answered.
	bool Found(const RedisValue &reply, std::string *why, std::string *notice);
	// RoleOk checks the reply to ROLE; false moves the cursor on (that sentinel was stale).
	bool RoleOk(const RedisValue &reply);
	// Watching: the link should follow the Sentinel watch's news (a redis-sentinel:// URL's master).
	bool Watching() const { return kind_ == Kind::kSentinel; }
	// Url: the URL the route was made of.
	const chat_outbox::RedisUrl &Url() const { return url_; }
	// SwitchedAway judges the watch's news: true when it names our master at an address other than
	// the one we are connected to (nothing to do while asking: the next query finds the new master
	// anyway).
	bool SwitchedAway(const MasterNews &news) const;
	// MasterMovedError: an error reply that means the node is no longer the master (READONLY on a
	// write, UNBLOCKED for a blocked command of a master turned replica).
	static bool MasterMovedError(const std::string &error);
	// Lost: the connection ended (or could not be made); the next one asks the sentinels again.
	void Lost();
	// Master: "host:port" of the last master found ("" for a plain URL or before the first).
	const std::string &Master() const { return master_; }

  private:
	enum class Phase { kAskSentinel,
		               kMaster };
	// kPlain: its own address; kSentinel: asks, then the master; kCluster: the seed nodes in turn;
	// kSentinels: the sentinels themselves in turn (ToSentinels).
	enum class Kind { kPlain,
		              kSentinel,
		              kCluster,
		              kSentinels };

	Kind kind_;
	chat_outbox::RedisUrl url_;
	chat_outbox::RedisUrl target_; // url_ itself, or url_ at the discovered master
	Phase phase_;
	size_t cursor_ = 0;
	std::string master_;
};

} // namespace chat_outboxd
