// tests/unit/common_relay/partition_layout_test.cpp - splitting a batch over partitions, layout changes.
#include <gtest/gtest.h>

#include "common/relay/partition_layout.hpp"

using namespace chat_outbox;

TEST(PartitionLayout, SortKeepsIdOrderWithinAPartition)
{
	// rows in id order with partitions 1, 0, 1, 2, 0
	std::vector<int> parts = {1, 0, 1, 2, 0};
	auto order = SortOrder(parts);
	EXPECT_EQ(order, (std::vector<size_t>{1, 4, 0, 2, 3}));
}

TEST(PartitionLayout, OneCallPerPartitionOnItsShard)
{
	std::vector<int> sorted = {0, 0, 1, 3, 3, 3};
	auto calls = PlanCalls(sorted, 2);
	ASSERT_EQ(calls.size(), 3u);
	EXPECT_EQ(calls[0].partition, 0);
	EXPECT_EQ(calls[0].shard, 0);
	EXPECT_EQ(calls[0].first, 0u);
	EXPECT_EQ(calls[0].n, 2u);
	EXPECT_EQ(calls[1].partition, 1);
	EXPECT_EQ(calls[1].shard, 1);
	EXPECT_EQ(calls[1].first, 2u);
	EXPECT_EQ(calls[1].n, 1u);
	EXPECT_EQ(calls[2].partition, 3);
	EXPECT_EQ(calls[2].shard, 1);
	EXPECT_EQ(calls[2].first, 3u);
	EXPECT_EQ(calls[2].n, 3u);
	EXPECT_TRUE(PlanCalls({}, 2).empty());
}

TEST(PartitionLayout, AChangeWaitsForTheOldQueuesToEmpty)
{
	EXPECT_EQ(NextLayoutStep(4, 4, 10), LayoutStep::kRelay);
	EXPECT_EQ(NextLayoutStep(1, 4, 0), LayoutStep::kSwitch);
	EXPECT_EQ(NextLayoutStep(1, 4, 3), LayoutStep::kWait);
	EXPECT_EQ(NextLayoutStep(4, 1, 1), LayoutStep::kWait);
}

TEST(PartitionLayout, JobKeysOfTheQueuesOnAShard)
{
	auto keys = QueueJobsKeys("bull", "q", 4, 1, 2);
	ASSERT_EQ(keys.size(), 10u);
	EXPECT_EQ(keys[0], "bull:q-p1:wait");
	EXPECT_EQ(keys[4], "bull:q-p1:delayed");
	EXPECT_EQ(keys[5], "bull:q-p3:wait");
	auto one = QueueJobsKeys("bull", "q", 1, 0, 2);
	ASSERT_EQ(one.size(), 5u);
	EXPECT_EQ(one[1], "bull:q:paused");
	EXPECT_TRUE(QueueJobsKeys("bull", "q", 1, 1, 2).empty());
}
