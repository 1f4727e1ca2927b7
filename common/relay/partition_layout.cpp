// common/relay/partition_layout.cpp - see partition_layout.hpp.
#include "common/relay/partition_layout.hpp"

#include <algorithm>
#include <numeric>

#include "common/bullmq/queue_keys.hpp"
#include "common/partitions.hpp"
#include "common/relay/lua/scripts.hpp" // built from common/relay/lua/*.lua

#include "common/relay/cpp_only.hpp"

namespace chat_outbox {

std::vector<PartitionCall>
PlanCalls(const std::vector<int> &partitions, int nshards)
{
	std::vector<PartitionCall> calls;
	for (size_t i = 0; i < partitions.size(); i++) {
		if (calls.empty() || calls.back().partition != partitions[i])
			calls.push_back({partitions[i], ShardOf(partitions[i], nshards), i, 0});
		calls.back().n++;
	}
	return calls;
}

std::vector<size_t>
SortOrder(const std::vector<int> &partitions)
{
	std::vector<size_t> order(partitions.size());
	std::iota(order.begin(), order.end(), size_t{0});
	std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return partitions[a] < partitions[b]; });
	return order;
}

LayoutStep
NextLayoutStep(int current, int wanted, int64_t jobs_in_current)
{
	if (current == wanted)
		return LayoutStep::kRelay;
	return jobs_in_current == 0 ? LayoutStep::kSwitch : LayoutStep::kWait;
}

const std::string &
QueueJobsScript()
{
	static const std::string script = relay_lua::kQueueJobs;
	return script;
}

std::vector<std::string>
QueueJobsKeys(std::string_view prefix, std::string_view queue, int n, int shard, int nshards)
{
	std::vector<std::string> keys;
	for (int p = 0; p < n; p++) {
		if (ShardOf(p, nshards) != shard)
			continue;
		std::string q = PartitionQueue(queue, n, p);
		for (const char *suffix : {"wait", "paused", "active", "prioritized", "delayed"})
			keys.push_back(bullmq::QueueKey(prefix, q, suffix));
	}
	return keys;
}

std::string
LayoutWaitMessage(int current, int wanted, int64_t jobs)
{
	return "changing from " + std::to_string(current) + " to " + std::to_string(wanted) +
	       " partitions: waiting for " + std::to_string(jobs) + " job(s) in the queues of the " +
	       std::to_string(current) + "-partition layout";
}

} // namespace chat_outbox
