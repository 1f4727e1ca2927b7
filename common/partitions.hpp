// common/partitions.hpp - the scale-out rules: which partition a chat is in, the partition's
// BullMQ queue, the Redis shard it lives on, and the layout key that says how many partitions a
// queue has now. One home for each rule, used by the relay (extension and relay process) and the
// daemon; docs/architecture.md ('Partitions and shards') states them for everyone else.
//
// Pure C++: no I/O, unit-tested without servers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/redis_url.hpp"

namespace chat_outbox {

// A service has 1 to kMaxPartitions partitions (chat_outbox.services.partitions checks the same range).
constexpr int kMaxPartitions = 256;

// PartitionOf: chat_id mod n, taken non-negative: ((chat_id % n) + n) % n. n >= 1.
int PartitionOf(int64_t chat_id, int n);

// ChatIdOfJson reads the JSON text of a payload's chat_id (as Postgres prints a jsonb number):
// an optional '-' and decimal digits that fit a bigint. Anything else (a string, a fraction, no
// chat_id at all) is no chat id.
std::optional<int64_t> ChatIdOfJson(std::string_view json_number);

// RowPartition: the partition of an outbox row whose payload has this chat id; a row without one
// (an event of publish_event() that names no chat) goes to partition 0.
int RowPartition(std::optional<int64_t> chat_id, int n);

// PartitionQueue: n == 1 keeps the service's queue name (the layout before partitions); with
// n > 1 partition p is the ordinary BullMQ queue "<queue>-p<p>". On a Redis Cluster the service's
// queue is named in its cluster form "{<queue>}" (ClusterQueueName, common/redis_cluster.hpp) and
// partition p's is "{<queue>-p<p>}": the suffix inside the hash tag, a slot per partition.
std::string PartitionQueue(std::string_view queue, int n, int p);

// ShardOf: partition p lives on shard p mod (number of shards). Shard 0 also holds the layout key.
int ShardOf(int p, int nshards);

// ShardName: how logs name a shard's Redis: "redis" when there is one, "redis shard <i>" of several.
std::string ShardName(size_t shard, size_t nshards);

// LayoutKey: "<prefix>:<queue>:partitions" on shard 0, the queue's current partition count as a
// decimal string (absent = 1). The relay is its only writer and SETs it before the first job under
// a count (docs/architecture.md, 'Changing the number of partitions').
std::string LayoutKey(std::string_view prefix, std::string_view queue);

// ParseLayout: the value of the layout key (nullopt = absent) as a count; nullopt when it is not
// a number from 1 to kMaxPartitions.
std::optional<int> ParseLayout(const std::optional<std::string> &value);

// LayoutValueProblem: what every relay and daemon says of a layout key whose value ParseLayout
// refuses. The value is anyone's who can write to Redis, so it is shown escaped (a byte outside
// printable ASCII, a quote or a backslash as \xNN) and cut after kLayoutValueShown bytes: it can
// neither cut nor forge a log line or a status text.
constexpr size_t kLayoutValueShown = 32;
std::string LayoutValueProblem(std::string_view queue, std::string_view value);

// ParseShardList splits a whitespace-separated list of Redis URLs (not commas: one URL may hold a
// comma-separated host list) and parses each with ParseRedisUrl. Order matters: it is the shard
// numbering, and must be the same for the relay and every daemon. Fails on an empty list, a bad
// element (the error names its position, never its password), the same server twice, or a
// redis-cluster:// URL beside others (a cluster is the whole broker: the list is then that one URL).
std::optional<std::vector<RedisUrl>> ParseShardList(const std::string &urls, std::string *error);

// RedactedShardList: the list for logs, each URL without its password, separated by spaces.
std::string RedactedShardList(const std::vector<RedisUrl> &shards);

} // namespace chat_outbox
