// tests/unit/common/queue_keys_test.cpp - the BullMQ key layout: key names, the queue's reserved key
// names, which job ids are safe, and which prefixes and queue names BullMQ can use.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/bullmq/queue_keys.hpp"

using namespace chat_outbox::bullmq;

TEST(QueueKeys, JobIds)
{
	EXPECT_TRUE(IsValidJobId("5b0e6c1c-3f7a-4d8e-9a51-0c2f1e7d9b42"));
	EXPECT_TRUE(IsValidJobId("outbox-consumers-7"));
	EXPECT_TRUE(!IsValidJobId(""));
	EXPECT_TRUE(!IsValidJobId("0"));
	EXPECT_TRUE(!IsValidJobId("42"));
	EXPECT_TRUE(!IsValidJobId("-42"));
	EXPECT_TRUE(!IsValidJobId("0:abc"));
	EXPECT_TRUE(!IsValidJobId("a:b"));
	EXPECT_TRUE(!IsValidJobId("has space"));
	EXPECT_TRUE(!IsValidJobId("quote\""));
	EXPECT_TRUE(!IsValidJobId(std::string(201, 'a')));
	EXPECT_TRUE(IsValidJobId("Wait") && IsValidJobId("taken-1") && IsValidJobId("a_b"));
}

TEST(QueueKeys, NoJobIdNamesAQueueKey)
{
	// every name BullMQ uses, and anything of that shape
	for (std::string_view name : QueueKeyNames()) {
		EXPECT_TRUE(MayNameQueueKey(name) && IsQueueKeyName(name)) << name;
		EXPECT_TRUE(!IsValidJobId(name)) << name;
	}
	for (const char *name : {"wait", "paused", "meta", "events", "marker", "active", "id", "delayed", "prioritized",
	                         "completed", "failed", "stalled", "stalled-check", "limiter", "pc", "repeat", "de",
	                         "metrics", "waiting-children", "waiting", "priority", "delay", "dn", "partitions", "members",
	                         "lease"})
		EXPECT_TRUE(std::find(QueueKeyNames().begin(), QueueKeyNames().end(), name) != QueueKeyNames().end())
		    << name;
	EXPECT_TRUE(!IsValidJobId("some-future-key") && !IsValidJobId("-"));
	EXPECT_TRUE(!MayNameQueueKey("outbox-consumers-3"));
	EXPECT_TRUE(!IsQueueKeyName("bad-json") && !IsQueueKeyName("waits"));
}

TEST(QueueKeys, KeyNames)
{
	EXPECT_EQ(QueueKey("{bull}", "q", "marker"), "{bull}:q:marker");
	EXPECT_EQ(QueueKey("bull", "chat-messages", ""), "bull:chat-messages:");
}

TEST(QueueKeys, PrefixAndQueueNames)
{
	EXPECT_TRUE(IsValidName("bull") && IsValidName("{bull}") && IsValidName("chat-messages"));
	EXPECT_FALSE(IsValidName(""));
	EXPECT_FALSE(IsValidName("a:b"));
	EXPECT_FALSE(IsValidName(":"));
	EXPECT_EQ(NameProblem("--queue", "chat-messages"), "");
	EXPECT_EQ(NameProblem("--queue", "a:b"), "--queue \"a:b\" contains ':'");
	EXPECT_EQ(NameProblem("prefix", ""), "prefix is empty");
}
