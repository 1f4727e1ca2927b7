// daemon/src/net/cluster_conn.hpp - the daemon's link to a Redis Cluster (a redis-cluster:// URL): the
// RedisCommands (net/redis_commands.hpp) whose commands each go to the master serving their key's
// hash slot, over one RedisConn per master (plaintext or TLS, as the URL says).
//
// Rules (the pure decisions are net/core/cluster_route.hpp's, the cluster's own rules
// common/redis_cluster.hpp's):
//   - the slot map is read with CLUSTER SLOTS at start, after a MOVED, after a CLUSTERDOWN or TRYAGAIN,
//     after any command that got no answer, and every kClusterRefreshMs while a master it uses (the
//     home master, below, or another) is not connected (the rule and its pace are
//     common/cluster_map_watch.hpp's, which the relays follow too; here a timer ticks at that pace and
//     the connections' state says who is lost). It is asked of a connected master; when there
//     is none, of one node at a time (a "seed" connection, named apart) from the last map's other
//     masters (a new link: the masters of the last map any link of the process read) and the URL's
//     seed nodes (a node that does not connect within kClusterSeedTicks
//     refreshes is left for the next); the seeds' failures (a wrong CA of a rediss-cluster:// URL, say)
//     are logged once per outage and cause (StateLog), whichever seed connection sees them;
//   - home slot: the slot of the owner's home key. Commands without a key (PUBLISH, CLIENT ..., INFO)
//     go to its master; Ready, OnReady, OnDown and ClientId are that connection's. A partition's
//     consumer is homed on its queue's slot, so its connections reach only the master of that slot;
//   - MOVED: the map takes the slot's new master and is read again, and the command goes there (it did
//     not run where it was refused). ASK (a slot being migrated, this key already moved): ASKING and the
//     command on the target, the map unchanged. At most kMaxClusterHops redirections a command;
//   - a command that got no answer is failed to its caller, as RedisConn does (it may have run); the
//     map is then read again, so the caller's next try goes to the master the cluster promoted;
//   - a connection to a node that is no master any more is closed (its pending commands fail).
// A master's failover is the cluster's own: its replica is promoted after cluster-node-timeout, and the
// next map names it.
#pragma once

#include <memory>
#include <string>

#include "common/cluster_map_watch.hpp"
#include "net/redis_commands.hpp"

namespace chat_outboxd {

using chat_outbox::kClusterRefreshMs;
// A seed node that has not connected after this many refreshes is left for the next.
inline constexpr int kClusterSeedTicks = 4;

class ClusterConn : public RedisCommands {
  public:
	// home_key: the key whose slot is this connection's home (see above). all_masters: connect to every
	// master as soon as the map names it (for owners whose keys spread over the slots); otherwise only
	// to the masters its commands go to, when they go.
	ClusterConn(uv_loop_t *loop, chat_outbox::RedisUrl url, const std::string &home_key, bool all_masters,
	            std::string role, std::string client_name, int64_t timeout_ms, StateLog *state_log);
	~ClusterConn() override;
	ClusterConn(const ClusterConn &) = delete;
	ClusterConn &operator=(const ClusterConn &) = delete;

	void Start() override;
	bool Ready() const override;
	void OnReady(std::function<void()> on_ready) override;
	void OnDown(std::function<void()> on_down) override;
	void Command(std::vector<std::string> argv, ReplyCb cb, int64_t timeout_ms = 0) override;
	int64_t ClientId() const override;
	void Drop(const std::string &why) override;
	void Close(std::function<void()> done) override;

	struct Impl;

  private:
	std::unique_ptr<Impl> impl_;
};

} // namespace chat_outboxd
