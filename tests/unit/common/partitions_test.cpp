// tests/unit/common/partitions_test.cpp - chat -> partition -> queue and shard (the scale-out rules).
#include <gtest/gtest.h>

#include <climits>

#include "common/bullmq/queue_keys.hpp"
#include "common/partitions.hpp"

using namespace chat_outbox;

TEST(Partitions, ChatModNTakenNonNegative)
{
	EXPECT_EQ(PartitionOf(42, 1), 0);
	EXPECT_EQ(PartitionOf(42, 4), 2);
	EXPECT_EQ(PartitionOf(0, 4), 0);
	EXPECT_EQ(PartitionOf(-1, 4), 3);
	EXPECT_EQ(PartitionOf(-4, 4), 0);
	EXPECT_EQ(PartitionOf(-5, 4), 3);
	EXPECT_EQ(PartitionOf(LLONG_MAX, 256), static_cast<int>(LLONG_MAX % 256));
	EXPECT_EQ(PartitionOf(LLONG_MIN, 3), static_cast<int>(((LLONG_MIN % 3) + 3) % 3));
	EXPECT_EQ(PartitionOf(LLONG_MIN, 256), 0);
	for (int n = 1; n <= 7; n++)
		for (int64_t c = -20; c <= 20; c++) {
			int p = PartitionOf(c, n);
			EXPECT_GE(p, 0);
			EXPECT_LT(p, n);
			EXPECT_EQ((c - p) % n, 0);
		}
}

TEST(Partitions, ChatIdOfAJsonNumberOnlyWhenAnIntegerInRange)
{
	EXPECT_EQ(ChatIdOfJson("42"), 42);
	EXPECT_EQ(ChatIdOfJson("-7"), -7);
	EXPECT_EQ(ChatIdOfJson("9223372036854775807"), LLONG_MAX);
	EXPECT_EQ(ChatIdOfJson("-9223372036854775808"), LLONG_MIN);
	EXPECT_EQ(ChatIdOfJson("9223372036854775808"), std::nullopt);
	EXPECT_EQ(ChatIdOfJson("42.0"), std::nullopt);
	EXPECT_EQ(ChatIdOfJson("4e1"), std::nullopt);
	EXPECT_EQ(ChatIdOfJson(""), std::nullopt);
	EXPECT_EQ(ChatIdOfJson("-"), std::nullopt);
	EXPECT_EQ(ChatIdOfJson("+1"), std::nullopt);
	EXPECT_EQ(ChatIdOfJson("\"42\""), std::nullopt);
	EXPECT_EQ(ChatIdOfJson("012"), 12); // what Postgres' jsonb never prints, but harmless
}

TEST(Partitions, RowPartitionFallsBackToZeroWithoutAChatId)
{
	EXPECT_EQ(RowPartition(std::optional<int64_t>(6), 4), 2);
	EXPECT_EQ(RowPartition(std::nullopt, 4), 0);
}

TEST(Partitions, OnePartitionKeepsTheQueueName)
{
	EXPECT_EQ(PartitionQueue("chat-messages", 1, 0), "chat-messages");
	EXPECT_EQ(PartitionQueue("chat-messages", 4, 0), "chat-messages-p0");
	EXPECT_EQ(PartitionQueue("chat-messages", 4, 3), "chat-messages-p3");
	EXPECT_EQ(PartitionQueue("q", 256, 255), "q-p255");
	EXPECT_TRUE(bullmq::IsValidName(PartitionQueue("q", 4, 1)));
}

TEST(Partitions, ShardIsPartitionModShards)
{
	EXPECT_EQ(ShardOf(0, 1), 0);
	EXPECT_EQ(ShardOf(3, 1), 0);
	EXPECT_EQ(ShardOf(0, 2), 0);
	EXPECT_EQ(ShardOf(1, 2), 1);
	EXPECT_EQ(ShardOf(2, 2), 0);
	EXPECT_EQ(ShardOf(3, 2), 1);
	EXPECT_EQ(ShardOf(5, 3), 2);
}

TEST(Partitions, ShardNameSaysWhichOfSeveral)
{
	EXPECT_EQ(ShardName(0, 1), "redis");
	EXPECT_EQ(ShardName(0, 2), "redis shard 0");
	EXPECT_EQ(ShardName(1, 2), "redis shard 1");
}

TEST(Partitions, LayoutKeyIsUnderTheQueueOnShardZero)
{
	EXPECT_EQ(LayoutKey("bull", "chat-messages"), "bull:chat-messages:partitions");
	EXPECT_TRUE(bullmq::IsQueueKeyName("partitions")); // a foreign job id may not name it
}

TEST(Partitions, ParseLayoutValue)
{
	EXPECT_EQ(ParseLayout(std::nullopt), 1); // absent = 1
	EXPECT_EQ(ParseLayout(std::string("4")), 4);
	EXPECT_EQ(ParseLayout(std::string("1")), 1);
	EXPECT_EQ(ParseLayout(std::string("0")), std::nullopt);
	EXPECT_EQ(ParseLayout(std::string("257")), std::nullopt);
	EXPECT_EQ(ParseLayout(std::string("x")), std::nullopt);
}

TEST(Partitions, LayoutValueProblemShowsTheValueEscaped)
{
	EXPECT_EQ(LayoutValueProblem("q", "x"), "the layout key of queue q holds \"x\", not a partition count from 1 to " +
	                                            std::to_string(kMaxPartitions));
	// a NUL, a newline, a quote and a backslash cannot cut or forge a log line or a status text
	std::string hostile("1\0x\n\"\\", 6);
	std::string shown = LayoutValueProblem("q", hostile);
	EXPECT_NE(shown.find("holds \"1\\x00x\\x0a\\x22\\x5c\","), std::string::npos) << shown;
	EXPECT_EQ(shown.find('\n'), std::string::npos) << shown;
	EXPECT_EQ(shown.size(), std::string(shown.c_str()).size()) << "no NUL in the text";
	// a long value is cut
	std::string big = LayoutValueProblem("q", std::string(10000, '7'));
	EXPECT_NE(big.find(std::string(kLayoutValueShown, '7') + "...\""), std::string::npos) << big;
	EXPECT_LT(big.size(), 200u);
}

TEST(Partitions, ShardListIsWhitespaceSeparatedInOrder)
{
	std::string error;
	auto one = ParseShardList("redis://127.0.0.1:6379/0", &error);
	ASSERT_TRUE(one) << error;
	ASSERT_EQ(one->size(), 1u);
	EXPECT_EQ((*one)[0].port, 6379);

	auto two = ParseShardList("  redis://:pw@a:7000/1 \n\tunix:///tmp/r.sock?db=2  ", &error);
	ASSERT_TRUE(two) << error;
	ASSERT_EQ(two->size(), 2u);
	EXPECT_EQ((*two)[0].host, "a");
	EXPECT_EQ((*two)[0].port, 7000);
	EXPECT_EQ((*two)[0].password, "pw");
	EXPECT_EQ((*two)[1].unix_socket, "/tmp/r.sock");
	EXPECT_EQ((*two)[1].db, 2);
}

TEST(Partitions, ShardListErrorsNameTheElementWithoutItsPassword)
{
	std::string error;
	EXPECT_FALSE(ParseShardList("", &error));
	EXPECT_NE(error.find("no Redis URL"), std::string::npos) << error;
	EXPECT_FALSE(ParseShardList("   ", &error));
	EXPECT_FALSE(ParseShardList("redis://a:1 redis://:secret@b:notaport", &error));
	EXPECT_NE(error.find("URL 2"), std::string::npos) << error;
	EXPECT_EQ(error.find("secret"), std::string::npos) << error;
	EXPECT_FALSE(ParseShardList("redis://a:1 redis://a:1", &error));
	EXPECT_NE(error.find("twice"), std::string::npos) << error;
}

TEST(Partitions, RedactedShardListForLogs)
{
	std::string error;
	auto two = ParseShardList("redis://:pw@a:7000/1 redis://b:7001", &error);
	ASSERT_TRUE(two);
	std::string r = RedactedShardList(*two);
	EXPECT_EQ(r.find("pw"), std::string::npos) << r;
	EXPECT_NE(r.find("a:7000"), std::string::npos) << r;
	EXPECT_NE(r.find("b:7001"), std::string::npos) << r;
}

// On a cluster the service's queue is "{<queue>}" and each partition's suffix goes inside the tag.
TEST(PartitionQueue, ClusterForm)
{
	EXPECT_EQ(chat_outbox::PartitionQueue("{chat-messages}", 1, 0), "{chat-messages}");
	EXPECT_EQ(chat_outbox::PartitionQueue("{chat-messages}", 4, 3), "{chat-messages-p3}");
	EXPECT_EQ(chat_outbox::PartitionQueue("chat-messages", 4, 3), "chat-messages-p3");
}
