// daemon/src/consumer/core/partition_assignment.cpp - see partition_assignment.hpp.
#include "consumer/core/partition_assignment.hpp"

#include <algorithm>

namespace chat_outboxd {

uint64_t
PartitionWeight(const std::string &member, int64_t partition)
{
	uint64_t h = 14695981039346656037ull; // FNV-1a offset basis
	auto eat = [&h](unsigned char c) {
		h ^= c;
		h *= 1099511628211ull;
	};
	for (char c : member)
		eat(static_cast<unsigned char>(c));
	eat(0); // "ab",1 and "a",b1 stay apart
	for (char c : std::to_string(partition))
		eat(static_cast<unsigned char>(c));
	// splitmix64's finalizer: FNV's low bits alone mix poorly for short inputs
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

std::vector<size_t>
AssignPartitions(const std::vector<std::string> &members, const std::vector<int64_t> &partitions)
{
	size_t m = members.size(), k = partitions.size();
	std::vector<size_t> owner(k, m);
	if (m == 0)
		return owner;
	// every (member, partition) pair, heaviest first; ties (equal weights) by member name, then partition
	struct Pair {
		uint64_t weight;
		size_t member, part;
	};
	std::vector<Pair> pairs;
	pairs.reserve(m * k);
	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < k; j++)
			pairs.push_back({PartitionWeight(members[i], partitions[j]), i, j});
	std::sort(pairs.begin(), pairs.end(), [&](const Pair &a, const Pair &b) {
		if (a.weight != b.weight)
			return a.weight > b.weight;
		if (members[a.member] != members[b.member])
			return members[a.member] < members[b.member];
		return partitions[a.part] < partitions[b.part];
	});
	// First every member takes k / m partitions, then k % m members take one more each. In each
	// pass a member under its share takes every free partition whose pair comes up, so the first
	// pass leaves no member short and the second leaves no partition free.
	std::vector<size_t> load(m, 0);
	size_t base = k / m;
	for (size_t cap : {base, base + 1})
		for (const Pair &p : pairs)
			if (owner[p.part] == m && load[p.member] < cap && (cap == base || load[p.member] == base)) {
				owner[p.part] = p.member;
				load[p.member]++;
			}
	return owner;
}

std::vector<int64_t>
PartitionsOf(const std::string &me, const std::vector<std::string> &members, int64_t n,
             const std::vector<int64_t> &left_out)
{
	std::vector<int64_t> parts;
	for (int64_t p = 0; p < n; p++)
		if (std::find(left_out.begin(), left_out.end(), p) == left_out.end())
			parts.push_back(p);
	std::vector<size_t> owner = AssignPartitions(members, parts);
	auto it = std::find(members.begin(), members.end(), me);
	std::vector<int64_t> mine;
	if (it == members.end())
		return mine;
	size_t idx = static_cast<size_t>(it - members.begin());
	for (size_t j = 0; j < parts.size(); j++)
		if (owner[j] == idx)
			mine.push_back(parts[j]);
	return mine;
}

} // namespace chat_outboxd
