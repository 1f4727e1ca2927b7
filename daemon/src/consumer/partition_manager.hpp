// daemon/src/consumer/partition_manager.hpp - shares a service's partitions among its live consumers
// by leases, and runs one BullMQ consumer per partition this daemon holds.
//
// Every tick (--lease-ttl / 3) it:
//   1. heartbeats on shard 0: registers this daemon in "<prefix>:<queue>:members" for a ttl, and
//      reads the live members and the layout key "<prefix>:<queue>:partitions" (absent = 1);
//   2. computes its partitions (consumer/core/partition_assignment.hpp: the same answer on every
//      member), minus --leave-partitions;
//   3. moves each partition's lease (consumer/core/lease.hpp) toward that target: acquires the
//      leases it should hold, renews those it holds, drains (finish in-flight, then release) those
//      it should give up. A partition is worked only in Held, by a BullmqConsumer on that
//      partition's queue, with its own Redis connections on the partition's shard and its own
//      inbox connection.
// A lease not confirmed within a ttl, or found another's, is Lost: its consumer starts nothing
// more at once, and its fetches are fenced by the lease in Redis besides. Stop (SIGTERM) drains
// every partition, releases every lease, deregisters, then calls done.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <uv.h>

#include "base/core/config.hpp"
#include "metrics/core/daemon_metrics.hpp"
#include "inbox/core/delivery.hpp"
#include "net/redis_commands.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

class SentinelWatchers;

class PartitionManager {
  public:
	// shards: the --redis-url list, in order (partition p on shard p mod shards.size()); watchers: the
	// daemon's Sentinel watch, which every connection of a redis-sentinel:// shard follows.
	PartitionManager(uv_loop_t *loop, const Config &cfg, std::vector<chat_outbox::RedisUrl> shards,
	                 MessageSink &sink, Metrics &metrics, SentinelWatchers *watchers);
	~PartitionManager();

	// on_fatal(exit code): another live daemon has our identity (3).
	void Start(std::function<void(int)> on_fatal);
	// Stop: drain every partition, release every lease, deregister, close; then done. Gives up
	// after a deadline while a server is down (the leases then expire by themselves).
	void Stop(std::function<void()> done);
	// ShardConn: the command connection to a shard (members, layout, leases; the Redis safety
	// checks read the shards past 0 through it).
	RedisCommands &ShardConn(size_t shard);

	struct Impl;

  private:
	std::unique_ptr<Impl> impl_;
};

} // namespace chat_outboxd
