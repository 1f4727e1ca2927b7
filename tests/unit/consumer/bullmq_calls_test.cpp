// tests/unit/consumer/bullmq_calls_test.cpp - script argument layouts (they must match the scripts' heads, consumer/core/lua/*.lua).
#include <gtest/gtest.h>

#include "consumer/core/bullmq_calls.hpp"

using namespace chat_outboxd;

TEST(BullmqCalls, FetchKeysAndArgs)
{
	QueueKeys q("bull", "chat-messages");
	ScriptCall c = FetchCall(q, 1000, "w:u:", 41, 30000, 100, "w");
	EXPECT_EQ(c.script, &FetchScript());
	EXPECT_EQ(c.keys.front(), "bull:chat-messages:wait");
	EXPECT_EQ(c.keys[8], "bull:chat-messages:limiter");
	EXPECT_EQ(c.keys.back(), "bull:chat-messages:lease");
	EXPECT_EQ(c.args, (std::vector<std::string>{"bull:chat-messages:", "1000", "w:u:", "41", "30000", "100", "w", ""}));
	ScriptCall fenced = FetchCall(q, 1000, "w:u:", 41, 30000, 100, "w", "w");
	EXPECT_EQ(fenced.args.back(), "w");
	EXPECT_TRUE(IsNoLease("NOLEASE the lease bull:q:lease is not held by w"));
	EXPECT_FALSE(IsNoLease("ERR NOLEASE"));
}

TEST(BullmqCalls, FinishGroups)
{
	QueueKeys q("{bull}", "q");
	ScriptCall c = CompleteCall(q, 5, {{"a", "t1", "{\"inserted\":true}", {10, 0}}, {"b", "t2", "null", {0, 60}}});
	ASSERT_EQ(c.args.size(), 2u + 2 * 5);
	EXPECT_EQ(c.args[0], "{bull}:q:");
	EXPECT_EQ(std::vector<std::string>(c.args.begin() + 7, c.args.end()),
	          (std::vector<std::string>{"b", "t2", "null", "0", "60"}));
	ScriptCall f = FailCall(q, 5, {{"a", "t", "invalid message: x", {-1, 0}, 3}});
	ASSERT_EQ(f.args.size(), 2u + 7);
	EXPECT_EQ(f.args[5], R"(["invalid message: x"])");
	EXPECT_EQ(f.args[8], "3");
	ScriptCall r = RetryCall(q, 5, {{"a", "t", "boom", 300, true}});
	ASSERT_EQ(r.args.size(), 2u + 6);
	EXPECT_EQ(r.args[6], "300");
	EXPECT_EQ(r.args[7], "1");
}

TEST(BullmqCalls, ExtendStalledRecover)
{
	QueueKeys q("bull", "q");
	ScriptCall e = ExtendLocksCall(q, 5, 30000, {{"a", "t1"}, {"b", "t2"}});
	EXPECT_EQ(e.args, (std::vector<std::string>{"bull:q:", "5", "30000", "a", "t1", "b", "t2"}));
	ScriptCall s = StalledCheckCall(q, 5, 30000);
	EXPECT_EQ(s.keys[1], "bull:q:stalled-check");
	EXPECT_EQ(s.args[2], "30000");
	EXPECT_EQ(s.args.back(), "9007199254740991"); // the check never fails a job for stalling
	ScriptCall r = RecoverIdentityCall(q, 5, "workers@h");
	EXPECT_EQ(r.keys.back(), "bull:q:lease");
	EXPECT_EQ(r.args, (std::vector<std::string>{"bull:q:", "5", "workers@h:", "0", ""}));
	ScriptCall t = RecoverIdentityCall(q, 5, "workers@h", true, "workers@h");
	EXPECT_EQ(t.args, (std::vector<std::string>{"bull:q:", "5", "workers@h:", "1", "workers@h"}));
}

TEST(BullmqCalls, ScriptsHaveDistinctShas)
{
	EXPECT_EQ(chat_outbox::ScriptSha1("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
	const LuaScript *all[] = {&FetchScript(), &CompleteScript(), &FailScript(), &RetryScript(),
	                          &ExtendLocksScript(), &StalledCheckScript(), &RecoverIdentityScript()};
	for (size_t i = 0; i < 7; i++)
		for (size_t k = i + 1; k < 7; k++)
			EXPECT_NE(all[i]->sha1, all[k]->sha1);
	EXPECT_EQ(StackTrace("a \"b\""), R"(["a \"b\""])");
}
