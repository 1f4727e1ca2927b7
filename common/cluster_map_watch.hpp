// common/cluster_map_watch.hpp - when a Redis Cluster client reads the slot map again while a master it
// uses is unreachable, and when the map it read ends its wait: the one rule of chat-outboxd's link
// (daemon/src/net/cluster_conn.hpp) and the relays' (common/relay/cluster_router.hpp).
//
// Rules: a master serving slots the client uses that does not answer (its connection refused, lost or
// timed out) is "lost"; while one is, the map is read again every kClusterRefreshMs (from a node that
// answers: the cluster names the promoted replica there once its failover is done, about
// cluster-node-timeout after the kill). A map that names no lost master as a master any more ends the
// wait (kPromoted): the client tries again at once instead of waiting out its reconnect backoff. A map
// that still names one (no failover yet, or a cluster that is really down) changes nothing: the
// caller's backoff goes on. A lost master that answers again is no longer lost. Pure: the caller passes
// its time in ms; unit-tested (tests/unit/common/cluster_map_watch_test.cpp).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace chat_outbox {

// While a master is lost, the slot map is read again this often.
inline constexpr int64_t kClusterRefreshMs = 250;

enum class ClusterWatchState : uint8_t {
	kSteady,   // every master the client uses answers: the map is read only when a reply says so
	kWatching, // a master is lost: the map is read every kClusterRefreshMs
};

// What a map read while watching says.
enum class ClusterMapNews : uint8_t {
	kUnchanged, // a lost master still serves slots (or no map was read): wait on
	kPromoted,  // no lost master serves slots any more: try again at once (the watch ends)
};

class ClusterMapWatch {
  public:
	// MasterLost: `master` (EndpointText) did not answer at now_ms. The first map read is due
	// kClusterRefreshMs later (the failure itself already made the caller read it once).
	void MasterLost(const std::string &master, int64_t now_ms);
	// MasterAnswered: `master` answered: it is not lost (the watch ends with the last one).
	void MasterAnswered(const std::string &master);

	// Due: whether to read the map at now_ms: watching, and kClusterRefreshMs since the last read.
	bool
	Due(int64_t now_ms) const
	{
		return state_ == ClusterWatchState::kWatching && now_ms >= next_ms_;
	}

	// MapRead: a read at now_ms gave a map whose masters are `masters` (EndpointText each; empty: no map
	// could be read). The next read is due kClusterRefreshMs later unless this one ends the watch.
	ClusterMapNews MapRead(const std::vector<std::string> &masters, int64_t now_ms);

	ClusterWatchState
	State() const
	{
		return state_;
	}

	// Lost: whether `master` is lost (a map read asks the nodes that answer first).
	bool
	Lost(const std::string &master) const
	{
		return lost_.count(master) > 0;
	}

  private:
	ClusterWatchState state_ = ClusterWatchState::kSteady;
	std::set<std::string> lost_;
	int64_t next_ms_ = 0; // while watching: the next read is due then
};

} // namespace chat_outbox
