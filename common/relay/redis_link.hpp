// common/relay/redis_link.hpp - a relay's blocking Redis broker, whatever its kind: one abstract link with
// two implementations, chosen once by OpenRedisLink from the URL.
//   RedisServerLink (redis_server_link.hpp): one Redis server, plaintext or TLS, found directly or by
//                   its Sentinels (redis://, rediss://, unix://, redis-sentinel://, rediss-sentinel://);
//   ClusterRouter   (cluster_router.hpp): a Redis Cluster (redis-cluster://), each call on the master
//                   serving its key's hash slot, over one RedisServerLink per master.
// Who uses it: chat-outbox-relay (relay/src/relay_loop.hpp: one link per shard, every call), and the
// extension's relay for a redis-cluster:// URL (extension/src/pg/redis_sink.cpp, inside CallCpp: its
// other URLs keep their non-blocking connection waited on the latch).
//
// Rules: each call connects first when needed and waits at most the link's timeout per command
// (common/redis_blocking.hpp); nothing is kept between batches but the connections. A failure throws
// RedisFailure and says whether it is about one queue or the broker, so the caller rolls back and
// its rows go again. Plain C++, no Postgres headers: compiled into the extension's library too.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/redis_url.hpp"
#include "common/relay/bullmq_batch_add.hpp"

namespace chat_outbox {

// RedisFailure: the batch did not go through; the caller rolls back. kService is about one queue
// (Redis answered the batch with an error: NOPERM, a queue key of the wrong type; nothing of it was
// written), kConnection about every service (unreachable, timeout, answer lost), kLayoutChanged not a
// failure: the layout key held something else than the call expected, nothing of it was written, and
// the service's next pass (at once) reads the key. kMarkChanged is not one either: the partition's
// mark was not the one the committed passes wrote or read (Redis lost writes, or a pass that wrote
// it rolled back),
// nothing of the call was written, and the service's next pass (at once) asks the database what to
// send again (common/relay/mark_watch.hpp).
struct RedisFailure : std::runtime_error {
	enum Kind { kConnection,
		        kService,
		        kLayoutChanged,
		        kMarkChanged } kind;
	int shard = 0;     // of a kConnection: the shard that failed (relay/src/outbox_db.cpp sets it)
	std::string reply; // of a kService: Redis's error reply as it came (a cluster's MOVED/ASK is read from it)
	RedisFailure(Kind k, const std::string &what, int s = 0) : std::runtime_error(what), kind(k), shard(s) {}
};

class RedisLink {
  public:
	virtual ~RedisLink() = default;
	RedisLink() = default;
	RedisLink(const RedisLink &) = delete;
	RedisLink &operator=(const RedisLink &) = delete;

	// AddBatch adds jobs[0..n) to `queue` (a partition's queue of layout.service_queue) in one Lua
	// call, connecting first when needed, when the layout key holds what `layout` expects and the
	// queue's mark what `mark` expects; the call writes mark.next. Returns, per job in order, nullopt
	// (created or a duplicate) or why Redis refused that job alone. Throws RedisFailure.
	virtual std::vector<std::optional<std::string>> AddBatch(const std::string &queue, const LayoutCheck &layout,
	                                                         const MarkStep &mark, const JobSpec *jobs, size_t n) = 0;

	// ConfirmReplicated runs WAIT <min_replicas> <timeout/2> after a pass's batches (on a cluster, on
	// every master the pass wrote to), when min_replicas > 0: fewer acknowledgements throw kConnection
	// (the connection is dropped), so the caller rolls the pass back and its rows go again.
	virtual void ConfirmReplicated() = 0;

	// Get, Set and EvalInteger run one command (connecting first when needed) for the layout of a
	// service's partitions (common/partitions.hpp): GET (nullopt = no such key), SET, and EVAL of
	// a script that returns an integer (a cluster runs it once per hash slot of its keys and adds the
	// results: for scripts that count, such as QueueJobsScript). An error reply throws kService.
	virtual std::optional<std::string> Get(const std::string &key) = 0;
	virtual void Set(const std::string &key, const std::string &value) = 0;
	virtual int64_t EvalInteger(const std::string &script, const std::vector<std::string> &keys) = 0;

	// Ping connects when needed and asks Redis for PONG (a cluster: reads the slot map and asks every
	// master): whether Redis is back after an outage, asked before a round rather than concluded from
	// passes that had nothing to send. Throws RedisFailure.
	virtual void Ping() = 0;

	// AwaitingPromotion: a Redis Cluster's master serving slots of this link did not answer, and its
	// failover may be under way (common/cluster_map_watch.hpp); one Redis: never. Promoted, while so,
	// reads the slot map again when due (every kClusterRefreshMs, from a node that answers, a call the
	// link's timeout bounds) and says whether it names a new master in the lost one's place: then the
	// caller's backoff ends and the pass goes again at once. A caller waiting out its backoff asks it
	// every kClusterRefreshMs. Throws nothing (a failed read is "not yet").
	virtual bool AwaitingPromotion() const { return false; }
	virtual bool Promoted() { return false; }

	virtual void Disconnect() = 0;
	virtual bool Connected() const = 0;
	// Connects changes whenever the link made a connection (of a cluster: any node's, or read the slot
	// map again): what Redis holds may then differ from what the relay last wrote, so the relay checks
	// its marks before its next batch (common/relay/mark_watch.hpp). Compared for equality only.
	virtual int64_t Connects() const = 0;
	// From the last connect's CONFIG GET: the durability warning ("" when safe) and appendfsync (of
	// a cluster: the first node's that warns, else the first node's).
	virtual std::string Warning() const = 0;
	virtual std::string Appendfsync() const = 0;
	// ScriptReloads counts the batches Redis answered NOSCRIPT (SCRIPT FLUSH, a failover behind a
	// proxy): each loaded the script again and went once more. The caller logs each.
	virtual int64_t ScriptReloads() const = 0;
	// TakeNotice returns, once, what the caller should log about the connection ("" if nothing):
	// with a redis-sentinel:// URL, the master's address when discovery finds a new one; with a
	// redis-cluster:// URL, the masters when a refreshed slot map names others than before, each MOVED
	// followed, and how many calls followed ASK.
	virtual std::string TakeNotice() = 0;
};

// OpenRedisLink: the link for this URL (a ClusterRouter for redis-cluster://, else a RedisServerLink),
// not yet connected. min_replicas: ConfirmReplicated's count (0: no WAIT).
std::unique_ptr<RedisLink> OpenRedisLink(const RedisUrl &url, int64_t timeout_ms, const std::string &prefix,
                                         int64_t min_replicas);

} // namespace chat_outbox
