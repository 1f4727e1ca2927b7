// common/redis_cluster.hpp - Redis Cluster's rules as a client must follow them: which hash slot a key
// is in, which master serves a slot (the slot map read from CLUSTER SLOTS), what a MOVED or ASK
// redirection says, and how a partition's queue is named so that all of its keys share one slot.
// One home for each rule, used by the relay (extension and process) and the daemon on a
// redis-cluster:// URL (common/redis_url.hpp); docs/architecture.md ("Redis Cluster") states them.
//
// Pure C++: no I/O, unit-tested without servers. The clients that send the commands own the
// connections; they ask this file where a key goes and what a reply means.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/redis_url.hpp"

namespace chat_outbox {

// Redis Cluster divides the key space into this many hash slots (fixed by the cluster protocol).
constexpr int kClusterSlots = 16384;

// KeySlot: the slot of a key, CRC16 (XMODEM) of its hash tag mod kClusterSlots. The hash tag is what
// lies between the first '{' and the first '}' after it, when that is not empty; otherwise the whole
// key. Keys with the same tag are in one slot, which is what lets one Lua script touch them all.
int KeySlot(std::string_view key);

// ClusterQueueName: a BullMQ queue's name on a cluster, "{<queue>}": its keys "<prefix>:{<queue>}:..."
// (wait, active, the job hashes, the lease, ...) all share the tag <queue>, so every script on the
// queue runs on one master, and different partitions' queues land in different slots (spread over
// the masters). This is BullMQ's documented way to run a queue on a cluster: a bullmq Worker on an
// ioredis Cluster connection names the queue "{chat-messages-p3}". `queue` is the partition queue's
// name (common/partitions.hpp, PartitionQueue) and must not itself contain braces. The service's bus
// channel built from it (bullmq/queue_keys.hpp, BusChannel) carries the same tag, so its sharded
// pub/sub (SPUBLISH/SSUBSCRIBE) is served by the same master as the queue.
std::string ClusterQueueName(std::string_view queue);
// InClusterForm: the name is a ClusterQueueName (or a partition queue's name made from one).
bool InClusterForm(std::string_view queue);

// A redirection a cluster node answers when it does not serve a key's slot: MOVED (the slot lives
// elsewhere now: refresh the slot map, send there) or ASK (the slot is being migrated and this key
// already moved: send ASKING then the command to the target, once, without changing the map).
enum class RedirectKind { kMoved,
	                      kAsk };
struct Redirect {
	RedirectKind kind;
	int slot;
	RedisEndpoint target; // host empty when the node gave none (":port"): the replying node's host
};

// ParseRedirect reads an error reply's text ("MOVED 3999 127.0.0.1:6381", "ASK 3999 [::1]:6381");
// nullopt when the error is no redirection.
std::optional<Redirect> ParseRedirect(std::string_view error);

// One range of CLUSTER SLOTS' reply: slots first..last (inclusive) served by master, with its replicas.
struct SlotRange {
	int first = 0;
	int last = 0;
	RedisEndpoint master;
	std::vector<RedisEndpoint> replicas;
};

// SlotMap: which master serves each slot. Built from the ranges a node reported; a slot no range
// covers has no master (the cluster is not fully covered: a command on it fails as CLUSTERDOWN would).
class SlotMap {
  public:
	// Build: the map of these ranges. Fails (and says why) on a range outside 0..kClusterSlots-1,
	// first > last, or two ranges that overlap.
	static std::optional<SlotMap> Build(const std::vector<SlotRange> &ranges, std::string *error);

	// MasterOf: the master serving this slot, or nullopt.
	std::optional<RedisEndpoint> MasterOf(int slot) const;
	// Masters: each master once, in the order of their lowest slot.
	std::vector<RedisEndpoint> Masters() const;
	// Covered: every slot has a master.
	bool Covered() const;
	// Moved: the map after a MOVED reply (one slot now at target), until the next full refresh.
	void Moved(int slot, const RedisEndpoint &target);

  private:
	std::vector<int> owner_; // kClusterSlots entries: index into masters_, -1 = none
	std::vector<RedisEndpoint> masters_;
	int IndexOf(const RedisEndpoint &e);
};

// SlotRangeFromReply: one element of CLUSTER SLOTS' reply as hiredis hands it over, flattened by the
// caller: the two integers, then each node's host and port (master first; a node's further fields,
// its id and metadata, are left out by the caller). `ports` and `hosts` have one entry per node.
std::optional<SlotRange> SlotRangeFromReply(long long first, long long last, const std::vector<std::string> &hosts,
                                            const std::vector<long long> &ports, std::string *error);

// AtNode: url (a redis-cluster:// URL's credentials) as a plain URL of one node of the cluster.
RedisUrl AtNode(const RedisUrl &url, const RedisEndpoint &node);

// SameEndpoint: one node (host compared as text, as the cluster announces it).
bool SameEndpoint(const RedisEndpoint &a, const RedisEndpoint &b);

// EndpointText: "host:port" ("[v6]:port") for logs and for the maps' keys.
std::string EndpointText(const RedisEndpoint &e);

} // namespace chat_outbox
