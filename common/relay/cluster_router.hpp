// common/relay/cluster_router.hpp - a relay's link to a Redis Cluster (a redis-cluster:// URL; the
// RedisLink of common/relay/redis_link.hpp, for chat-outbox-relay and the extension's relay alike): each
// call goes to the master serving its key's hash slot, by the slot map (common/redis_cluster.hpp), on
// that master's RedisServerLink.
//
// Rules: the map is read with CLUSTER SLOTS from the first node that answers (the masters it knew,
// then the URL's seed nodes) before the first call and again after any failure. MOVED: the slot
// lives elsewhere now (a reshard, a failover): the map is read again and the call goes there. ASK:
// the slot is being migrated and this queue's keys are already on the target: ASKING, then the call
// there, the map unchanged. TRYAGAIN (a migration holds part of the keys): the call goes again after
// kTryAgainPauseMs. A node that cannot be reached, or CLUSTERDOWN, is a connection failure for the
// pass (it rolls back, its rows go again after the relay's backoff): the cluster's own failover
// promotes a replica, and the next map names it. A master that cannot be reached is "lost"
// (common/cluster_map_watch.hpp, the rule chat-outboxd follows too): while one is, the relay waiting
// out its backoff asks Promoted every kClusterRefreshMs, which reads the map from the nodes that
// answer (the lost masters asked last), and goes again as soon as the map names a new master in its
// place: the relay follows a promotion within kClusterRefreshMs, as the daemons do, not after its
// backoff; a cluster without a new master keeps the backoff. Each batch adds to one partition's
// queue, whose keys share one slot (ClusterQueueName), so a batch is one script on one master, as on
// a shard.
// min_replicas (--redis-min-replicas, chat_outbox.redis_min_replicas): WAIT on every master the pass wrote to. The log says when the masters change,
// each MOVED followed, and how many calls followed ASK (TakeNotice, once per round).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/cluster_map_watch.hpp"
#include "common/redis_cluster.hpp"
#include "common/relay/redis_server_link.hpp"

namespace chat_outbox {

// A redirection chain longer than this is a cluster in flux: the pass fails and goes again later.
inline constexpr int kMaxRedirects = 8;
inline constexpr int kTryAgainPauseMs = 50;

class ClusterRouter final : public RedisLink {
  public:
	ClusterRouter(RedisUrl url, int64_t timeout_ms, std::string prefix, int64_t min_replicas);
	~ClusterRouter() override;

	std::vector<std::optional<std::string>> AddBatch(const std::string &queue, const LayoutCheck &layout,
	                                                 const MarkStep &mark, const JobSpec *jobs, size_t n) override;
	void ConfirmReplicated() override;
	std::optional<std::string> Get(const std::string &key) override;
	void Set(const std::string &key, const std::string &value) override;
	// EvalInteger runs the script once per hash slot of its keys (in groups as given) and adds the
	// results: for scripts that count (common/relay/partition_layout.hpp, QueueJobsScript).
	int64_t EvalInteger(const std::string &script, const std::vector<std::string> &keys) override;
	// Ping reads the slot map again and asks every master for PONG; a slot without a master fails.
	void Ping() override;
	bool AwaitingPromotion() const override;
	bool Promoted() override;
	void Disconnect() override;
	// Connected: a slot map is held (none after a connection failure: the next call reads it again).
	bool Connected() const override;
	// Connects: the slot maps read plus every node link's connections
	int64_t Connects() const override;
	std::string Warning() const override;
	std::string Appendfsync() const override;
	int64_t ScriptReloads() const override;
	std::string TakeNotice() override;

  private:
	void Refresh();
	void AddNotice(const std::string &line);
	// Lost: `master` did not answer (a connection failure): the map is dropped and the watch told.
	void Lost(const std::string &master);
	RedisServerLink &Node(const RedisEndpoint &e);
	// Routed runs op on the master of `slot`, following redirections as the rules say.
	template <class Op>
	auto Routed(int slot, Op op) -> decltype(op(std::declval<RedisServerLink &>(), RedisEndpoint{}));

	RedisUrl url_;
	int64_t timeout_ms_;
	std::string prefix_;
	int64_t min_replicas_;
	std::optional<SlotMap> map_;
	std::map<std::string, std::unique_ptr<RedisServerLink>> nodes_; // by EndpointText
	std::set<std::string> written_;                                 // masters written since the last ConfirmReplicated
	std::vector<RedisEndpoint> last_masters_;                       // asked first for the next map
	std::string masters_;                                           // the last map's masters, for the notice
	std::string notice_;
	ClusterMapWatch watch_; // the masters lost, and when to read the map again
	int64_t asks_ = 0;      // ASK redirections followed since the last notice
	int64_t maps_read_ = 0; // slot maps read (Connects)
};

} // namespace chat_outbox
