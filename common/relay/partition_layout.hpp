// common/relay/partition_layout.hpp - how the relay splits a batch over partitions and
// shards, and when it may change a queue's partition count. Shared by the in-database relay
// (extension/src/pg/relay_pass.cpp) and the relay process (relay/); the rules themselves (a chat's
// partition, queue names, shards, the layout key) are common/partitions.hpp's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chat_outbox {

// PartitionCall: one Lua call of a batch, rows [first, first + n) of the batch (after
// SortByPartition) to partition `partition`'s queue on shard `shard`.
struct PartitionCall {
	int partition;
	int shard;
	size_t first;
	size_t n;
};

// PlanCalls groups a batch whose rows are sorted by (partition, id): one call per partition
// present, in partition order. partitions[i] is row i's partition.
std::vector<PartitionCall> PlanCalls(const std::vector<int> &partitions, int nshards);

// SortOrder returns the permutation that sorts the batch's rows (given in id order) by partition,
// keeping id order within each partition: the order each partition's queue receives its jobs.
std::vector<size_t> SortOrder(const std::vector<int> &partitions);

// What a pass does about the layout, given the count in Redis (current), the service's count
// (wanted) and the jobs still waiting in current's queues.
enum class LayoutStep {
	kRelay,  // current == wanted: relay under it
	kSwitch, // a change whose old queues are empty: SET the layout key to wanted, then relay under it
	kWait,   // a change whose old queues still hold jobs: relay nothing of the service yet
};
LayoutStep NextLayoutStep(int current, int wanted, int64_t jobs_in_current);

// QueueJobsScript: a Lua script (common/relay/lua/queue_jobs.lua) whose KEYS are groups of five keys of a queue (QueueJobsKeys) and
// which returns the number of jobs in them: wait, paused, active (lists), prioritized, delayed
// (sorted sets) - every state a job waits or runs in. A key of another type is an error.
const std::string &QueueJobsScript();

// QueueJobsKeys: the five keys of each queue of the n-partition layout that lives on `shard`.
std::vector<std::string> QueueJobsKeys(std::string_view prefix, std::string_view queue, int n, int shard, int nshards);

// LayoutWaitMessage: what the status view says while a change waits.
std::string LayoutWaitMessage(int current, int wanted, int64_t jobs);

} // namespace chat_outbox
