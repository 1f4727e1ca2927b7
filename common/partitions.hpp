// common/partitions.hpp - how a service's traffic is split: chat -> partition -> queue -> shard.
//
// The rules every side (the relay, chat-outbox-relay, chat-outboxd) must apply alike:
//   - a service has n >= 1 partitions; chat c goes to partition ((c % n) + n) % n;
//   - partition p of queue q is the BullMQ queue q when n == 1 (the layout of a single-partition
//     deployment never changes), else "q-p<p>";
//   - Redis may be several servers (shards), listed in one setting separated by whitespace, in the
//     same order everywhere; partition p lives on shard p mod (number of shards). Shard 0 holds the
//     layout key "<prefix>:<q>:partitions" (the current n; absent = 1) and the consumers' members.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chat_outbox {

// kMaxPartitions bounds n: a layout key above it is refused rather than followed.
constexpr int64_t kMaxPartitions = 1024;

int64_t PartitionOf(int64_t chat_id, int64_t n);
std::string PartitionQueue(std::string_view queue, int64_t n, int64_t p);
size_t ShardOf(int64_t p, size_t shards);

// SplitRedisUrls splits a shard list on whitespace (never on ',': a sentinel URL holds a
// comma-separated host list). Empty elements are dropped.
std::vector<std::string> SplitRedisUrls(std::string_view list);

// ParsePartitionCount reads the layout key's value: an integer from 1 to kMaxPartitions.
std::optional<int64_t> ParsePartitionCount(std::string_view text);

} // namespace chat_outbox
