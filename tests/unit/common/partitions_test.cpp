// tests/unit/common/partitions_test.cpp - chat -> partition -> queue -> shard, and the shard list.
#include <gtest/gtest.h>

#include "partitions.hpp"

using namespace chat_outbox;

TEST(Partitions, ChatToPartitionIsNonNegative)
{
	EXPECT_EQ(PartitionOf(7, 1), 0);
	EXPECT_EQ(PartitionOf(7, 4), 3);
	EXPECT_EQ(PartitionOf(8, 4), 0);
	EXPECT_EQ(PartitionOf(-1, 4), 3);
	EXPECT_EQ(PartitionOf(-8, 4), 0);
	EXPECT_EQ(PartitionOf(INT64_MIN, 3), ((INT64_MIN % 3) + 3) % 3);
}

TEST(Partitions, QueueNames)
{
	EXPECT_EQ(PartitionQueue("chat-messages", 1, 0), "chat-messages");
	EXPECT_EQ(PartitionQueue("chat-messages", 4, 0), "chat-messages-p0");
	EXPECT_EQ(PartitionQueue("chat-messages", 4, 3), "chat-messages-p3");
}

TEST(Partitions, Shards)
{
	EXPECT_EQ(ShardOf(0, 1), 0u);
	EXPECT_EQ(ShardOf(3, 1), 0u);
	EXPECT_EQ(ShardOf(3, 2), 1u);
	EXPECT_EQ(ShardOf(4, 2), 0u);
}

TEST(Partitions, UrlListSplitsOnWhitespaceOnly)
{
	EXPECT_EQ(SplitRedisUrls("redis://a:1/0"), std::vector<std::string>{"redis://a:1/0"});
	EXPECT_EQ(SplitRedisUrls("  redis://a \t redis://b\n"), (std::vector<std::string>{"redis://a", "redis://b"}));
	EXPECT_EQ(SplitRedisUrls("redis-sentinel://h1:26379,h2:26379/m redis://b"),
	          (std::vector<std::string>{"redis-sentinel://h1:26379,h2:26379/m", "redis://b"}));
	EXPECT_TRUE(SplitRedisUrls(" ").empty());
}

TEST(Partitions, LayoutValue)
{
	EXPECT_EQ(ParsePartitionCount("1"), 1);
	EXPECT_EQ(ParsePartitionCount("4"), 4);
	EXPECT_EQ(ParsePartitionCount("1024"), 1024);
	EXPECT_FALSE(ParsePartitionCount("0"));
	EXPECT_FALSE(ParsePartitionCount("1025"));
	EXPECT_FALSE(ParsePartitionCount("-1"));
	EXPECT_FALSE(ParsePartitionCount("4 "));
	EXPECT_FALSE(ParsePartitionCount(""));
	EXPECT_FALSE(ParsePartitionCount("99999999999999999999"));
}
