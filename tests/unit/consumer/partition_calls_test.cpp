// tests/unit/consumer/partition_calls_test.cpp - the members/lease calls' layouts and reply decoders.
#include <gtest/gtest.h>

#include "consumer/core/partition_calls.hpp"

using namespace chat_outboxd;

TEST(PartitionCalls, KeysAndArgs)
{
	ScriptCall h = HeartbeatCall("bull", "chat-messages", "workers@a", 5000);
	EXPECT_EQ(h.keys, (std::vector<std::string>{"bull:chat-messages:members", "bull:chat-messages:partitions"}));
	EXPECT_EQ(h.args, (std::vector<std::string>{"workers@a", "5000"}));
	ScriptCall a = AcquireCall("bull", "chat-messages-p3", "workers@a", 5000);
	EXPECT_EQ(a.keys, std::vector<std::string>{"bull:chat-messages-p3:lease"});
	EXPECT_EQ(a.args, (std::vector<std::string>{"workers@a", "5000"}));
	EXPECT_EQ(RenewCall("bull", "q", "w", 10).keys, std::vector<std::string>{"bull:q:lease"});
	EXPECT_EQ(ReleaseCall("bull", "q", "w").args, std::vector<std::string>{"w"});
	EXPECT_EQ(LeaveCall("bull", "q", "w").keys, std::vector<std::string>{"bull:q:members"});
	// five distinct scripts
	EXPECT_NE(a.script->sha1, RenewCall("b", "q", "w", 1).script->sha1);
	EXPECT_NE(ReleaseCall("b", "q", "w").script->sha1, RenewCall("b", "q", "w", 1).script->sha1);
	EXPECT_EQ(a.script, AcquireCall("x", "y", "z", 1).script);
}

TEST(PartitionCalls, DecodeHeartbeat)
{
	Heartbeat hb;
	std::string err;
	RedisValue r = RedisValue::Arr({RedisValue::Arr({RedisValue::Str("d2"), RedisValue::Str("d1")}), RedisValue::Str("4")});
	ASSERT_TRUE(DecodeHeartbeat(r, &hb, &err)) << err;
	EXPECT_EQ(hb.members, (std::vector<std::string>{"d1", "d2"}));
	EXPECT_EQ(hb.layout, "4");
	r = RedisValue::Arr({RedisValue::Arr({RedisValue::Str("d1")}), RedisValue()});
	ASSERT_TRUE(DecodeHeartbeat(r, &hb, &err));
	EXPECT_FALSE(hb.layout);
	EXPECT_FALSE(DecodeHeartbeat(RedisValue::Err("WRONGTYPE x"), &hb, &err));
	EXPECT_EQ(err, "WRONGTYPE x");
	EXPECT_FALSE(DecodeHeartbeat(RedisValue::Arr({RedisValue::Str("x")}), &hb, &err));
	EXPECT_FALSE(DecodeHeartbeat(RedisValue::Arr({RedisValue::Arr({RedisValue::Int(1)}), RedisValue()}), &hb, &err));
}

TEST(PartitionCalls, Acquire)
{
	auto won = DecodeAcquire(RedisValue::Int(1));
	ASSERT_TRUE(won);
	EXPECT_TRUE(won->won);
	auto refused = DecodeAcquire(RedisValue::Int(-1234));
	ASSERT_TRUE(refused);
	EXPECT_FALSE(refused->won);
	EXPECT_EQ(refused->left_ms, 1234);
	EXPECT_EQ(DecodeAcquire(RedisValue::Int(0))->left_ms, 0);
	EXPECT_FALSE(DecodeAcquire(RedisValue::Int(2)));
	EXPECT_FALSE(DecodeAcquire(RedisValue::Err("WRONGTYPE")));
}

TEST(PartitionCalls, Flags)
{
	EXPECT_EQ(DecodeFlag(RedisValue::Int(1)), true);
	EXPECT_EQ(DecodeFlag(RedisValue::Int(0)), false);
	EXPECT_FALSE(DecodeFlag(RedisValue::Int(2)));
	EXPECT_FALSE(DecodeFlag(RedisValue::Err("NOSCRIPT")));
}

TEST(PartitionCalls, PartitionList)
{
	std::vector<int64_t> v;
	std::string err;
	EXPECT_TRUE(ParsePartitionList("", &v, &err) && v.empty());
	EXPECT_TRUE(ParsePartitionList("3", &v, &err));
	EXPECT_EQ(v, std::vector<int64_t>{3});
	EXPECT_TRUE(ParsePartitionList("1, 3 5,3", &v, &err));
	EXPECT_EQ(v, (std::vector<int64_t>{1, 3, 5}));
	EXPECT_FALSE(ParsePartitionList("a", &v, &err));
	EXPECT_FALSE(ParsePartitionList("-1", &v, &err));
	EXPECT_FALSE(ParsePartitionList("1;2", &v, &err));
	EXPECT_FALSE(ParsePartitionList("99999999", &v, &err));
	EXPECT_NE(err.find("--leave-partitions"), std::string::npos);
}
