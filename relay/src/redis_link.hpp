// relay/src/redis_link.hpp - chat-outbox-relay's Redis connection: blocking, with a timeout, plaintext
// or TLS (common/redis_blocking.hpp).
//
// One connection, the handshake of common/redis_handshake (AUTH, SELECT), SCRIPT LOAD of the
// extension's batch-add script and the durability check; then one EVALSHA per batch, encoded by
// EncodeBatchAdd, the extension's own encoder. Nothing is kept between batches but the connection.
// A redis-cluster:// URL's link is a ClusterRouter (cluster_router.hpp) over one such link per master.
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/redis_blocking.hpp"
#include "common/relay/bullmq_batch_add.hpp"
#include "common/redis_cluster.hpp"
#include "common/redis_url.hpp"

namespace chat_outbox::relay {

class ClusterRouter;

// RedisFailure: the batch did not go through; the caller rolls back. kService is about one queue
// (Redis answered the batch with an error: NOPERM, a queue key of the wrong type; nothing of it was
// written), kConnection about every service (unreachable, timeout, answer lost), kLayoutChanged not a
// failure: the layout key held something else than the call expected, nothing of it was written, and
// the service's next pass (at once) reads the key.
struct RedisFailure : std::runtime_error {
	enum Kind { kConnection,
		        kService,
		        kLayoutChanged } kind;
	int shard = 0;     // of a kConnection: the shard that failed (outbox_db.cpp sets it)
	std::string reply; // of a kService: Redis's error reply as it came (a cluster's MOVED/ASK is read from it)
	RedisFailure(Kind k, const std::string &what, int s = 0) : std::runtime_error(what), kind(k), shard(s) {}
};

class RedisLink {
  public:
	RedisLink(RedisUrl url, int64_t timeout_ms, std::string prefix, int64_t min_replicas = 0);
	~RedisLink();
	RedisLink(const RedisLink &) = delete;
	RedisLink &operator=(const RedisLink &) = delete;

	// AddBatch adds jobs[0..n) to `queue` (a partition's queue of layout.service_queue) in one Lua
	// call, connecting first when needed, when the layout key holds what `layout` expects. Returns,
	// per job in order, nullopt (created or a duplicate) or why Redis refused that job alone. Throws
	// RedisFailure.
	std::vector<std::optional<std::string>> AddBatch(const std::string &queue, const LayoutCheck &layout,
	                                                 const JobSpec *jobs, size_t n);

	// ConfirmReplicated runs WAIT <min_replicas> <timeout/2> after a pass's batches, when
	// min_replicas > 0: fewer acknowledgements throw kConnection (the connection is dropped), so the
	// caller rolls the pass back and its rows go again.
	void ConfirmReplicated();

	// Get, Set and EvalInteger run one command (connecting first when needed) for the layout of a
	// service's partitions (common/partitions.hpp): GET (nullopt = no such key), SET, and EVAL of
	// a script that returns an integer. An error reply throws kService (it is about that queue).
	std::optional<std::string> Get(const std::string &key);
	void Set(const std::string &key, const std::string &value);
	int64_t EvalInteger(const std::string &script, const std::vector<std::string> &keys);

	// Ping connects when needed and asks Redis for PONG: whether Redis is back after an outage,
	// asked before a round rather than concluded from passes that had nothing to send. Throws RedisFailure.
	void Ping();

	// A cluster node's link (ClusterRouter's): ASKING before the command an ASK redirection names,
	// and the slot map this node reports (CLUSTER SLOTS). Throw RedisFailure.
	void Asking();
	std::vector<SlotRange> ClusterSlots();

	void Disconnect();
	bool Connected() const;
	// From the last connect's CONFIG GET: the durability warning ("" when safe) and appendfsync (of
	// a cluster: the first node's that warns, else the first node's).
	std::string Warning() const;
	std::string Appendfsync() const;
	// ScriptReloads counts the batches Redis answered NOSCRIPT (SCRIPT FLUSH, a failover behind a
	// proxy): each loaded the script again and went once more. The caller logs each.
	int64_t ScriptReloads() const;
	// TakeNotice returns, once, what the caller should log about the connection ("" if nothing):
	// with a redis-sentinel:// URL, the master's address when discovery finds a new one.
	// With a redis-cluster:// URL, the masters when a refreshed slot map names others than before.
	std::string TakeNotice();

  private:
	void Connect();
	redisReply *Command(const std::vector<std::string> &argv); // caller frees; throws kConnection
	redisReply *Checked(const std::vector<std::string> &argv); // Command, connecting first; an error reply throws kService
	redisReply *Roundtrip(const std::string &resp);            // caller frees; throws kConnection
	[[noreturn]] void FailConnection(const std::string &what);

	RedisUrl url_;
	int64_t timeout_ms_;
	int64_t min_replicas_;
	size_t sentinel_cursor_ = 0;
	std::string master_; // redis-sentinel:// only: "host:port" last discovered
	std::string notice_;
	std::string prefix_;
	BlockingRedis conn_;
	std::string sha_;
	std::string warning_;
	std::string appendfsync_;
	int64_t script_reloads_ = 0;
	// redis-cluster:// only: every call goes through the router to the node serving its key's slot
	std::unique_ptr<ClusterRouter> cluster_;
};

} // namespace chat_outbox::relay
