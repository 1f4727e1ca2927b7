// tests/unit/consumer/partition_assignment_test.cpp - balanced, agreed on by every member, little movement.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "consumer/core/partition_assignment.hpp"

using namespace chat_outboxd;

namespace {

std::vector<std::string>
Members(int m, const char *prefix = "workers@host-")
{
	std::vector<std::string> out;
	for (int i = 0; i < m; i++)
		out.push_back(prefix + std::to_string(i));
	return out;
}

std::vector<int64_t>
Range(int64_t n)
{
	std::vector<int64_t> out;
	for (int64_t p = 0; p < n; p++)
		out.push_back(p);
	return out;
}

// Owners maps partition -> member name.
std::map<int64_t, std::string>
Owners(const std::vector<std::string> &members, int64_t n)
{
	std::map<int64_t, std::string> out;
	auto parts = Range(n);
	auto owner = AssignPartitions(members, parts);
	for (size_t j = 0; j < parts.size(); j++)
		out[parts[j]] = members.at(owner[j]);
	return out;
}

} // namespace

TEST(PartitionAssignment, BalancedForEveryShape)
{
	for (int m = 1; m <= 9; m++)
		for (int64_t n = 1; n <= 40; n++) {
			auto members = Members(m);
			auto owner = AssignPartitions(members, Range(n));
			std::vector<int64_t> load(m, 0);
			for (size_t o : owner) {
				ASSERT_LT(o, members.size());
				load[o]++;
			}
			auto [lo, hi] = std::minmax_element(load.begin(), load.end());
			EXPECT_EQ(*lo, n / m) << m << " members, " << n << " partitions";
			EXPECT_LE(*hi, n / m + 1) << m << " members, " << n << " partitions";
		}
}

TEST(PartitionAssignment, EveryMemberAgreesWhateverTheListOrder)
{
	auto members = Members(5);
	auto a = Owners(members, 32);
	std::reverse(members.begin(), members.end());
	EXPECT_EQ(a, Owners(members, 32));
	std::rotate(members.begin(), members.begin() + 2, members.end());
	EXPECT_EQ(a, Owners(members, 32));
	// PartitionsOf, asked by each member, covers every partition exactly once
	std::vector<int> seen(32, 0);
	for (const auto &me : members)
		for (int64_t p : PartitionsOf(me, members, 32, {}))
			seen[p]++;
	EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 32);
}

TEST(PartitionAssignment, AJoinOrALeaveMovesFewPartitions)
{
	// Moving the newcomer's share (n / (m + 1), rounded up) is the least possible; the greedy
	// rendezvous moves at most about twice that (who keeps the one extra partition may change too).
	for (int m = 1; m <= 8; m++)
		for (int64_t n : {4, 16, 64, 256}) {
			auto before = Owners(Members(m), n);
			auto after = Owners(Members(m + 1), n);
			int64_t moved = 0;
			for (const auto &[p, who] : before)
				moved += after[p] != who;
			int64_t share = (n + m) / (m + 1);
			EXPECT_LE(moved, 2 * share + 2) << m << " -> " << m + 1 << " members, " << n << " partitions";
		}
}

TEST(PartitionAssignment, TwoMembersFourPartitionsTwoEach)
{
	auto members = Members(2, "d");
	EXPECT_EQ(PartitionsOf("d0", members, 4, {}).size(), 2u);
	EXPECT_EQ(PartitionsOf("d1", members, 4, {}).size(), 2u);
}

TEST(PartitionAssignment, PartitionsLeftOutAreNobodys)
{
	auto members = Members(3);
	std::vector<int> seen(8, 0);
	for (const auto &me : members)
		for (int64_t p : PartitionsOf(me, members, 8, {3, 5}))
			seen[p]++;
	EXPECT_EQ(seen, (std::vector<int>{1, 1, 1, 0, 1, 0, 1, 1}));
}

TEST(PartitionAssignment, NobodyAndStrangers)
{
	EXPECT_EQ(AssignPartitions({}, Range(3)), (std::vector<size_t>{0, 0, 0}));
	EXPECT_TRUE(PartitionsOf("stranger", Members(2), 4, {}).empty());
	EXPECT_EQ(PartitionsOf("only", {"only"}, 1, {}), std::vector<int64_t>{0});
}

TEST(PartitionAssignment, WeightIsFixed)
{
	// agreed across builds and machines: a fixed function, not std::hash
	EXPECT_EQ(PartitionWeight("workers@a", 0), PartitionWeight("workers@a", 0));
	EXPECT_NE(PartitionWeight("workers@a", 1), PartitionWeight("workers@a", 0));
	EXPECT_NE(PartitionWeight("a", 11), PartitionWeight("a1", 1));
}
