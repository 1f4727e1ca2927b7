// tests/unit/net/sentinel_watch_test.cpp - what the daemon's one Sentinel watch decides
// (daemon/src/net/core/sentinel_watch.hpp): which URLs share it, how it reads the sentinels' news,
// and what it logs when the watched sentinel goes away.
#include <gtest/gtest.h>

#include "net/core/sentinel_watch.hpp"

using namespace chat_outboxd;

namespace {

chat_outbox::RedisUrl
WatchUrl(const std::string &text)
{
	std::string err;
	auto u = chat_outbox::ParseRedisUrl(text, &err);
	EXPECT_TRUE(u) << err;
	return *u;
}

} // namespace

TEST(SentinelWatch, OneWatchPerSetOfSentinels)
{
	const std::string k = SentinelWatch::Key(WatchUrl("redis-sentinel://s1:1,s2:2/mymaster"));
	// another master, db or master password on the same sentinels: the same watch
	EXPECT_EQ(k, SentinelWatch::Key(WatchUrl("redis-sentinel://s1:1,s2:2/other")));
	EXPECT_EQ(k, SentinelWatch::Key(WatchUrl("redis-sentinel://:pw@s1:1,s2:2/mymaster?db=3")));
	// other sentinels, other sentinel credentials or TLS: a watch of its own
	EXPECT_NE(k, SentinelWatch::Key(WatchUrl("redis-sentinel://s1:1,s3:3/mymaster")));
	EXPECT_NE(k, SentinelWatch::Key(WatchUrl("redis-sentinel://s1:1,s2:2/mymaster?sentinel_password=x")));
	EXPECT_NE(k, SentinelWatch::Key(WatchUrl("rediss-sentinel://s1:1,s2:2/mymaster")));
}

TEST(SentinelWatch, ReadsBothAnnouncementsOfANewMaster)
{
	auto sw = SentinelWatch::Announcement("+switch-master", "mymaster 10.0.0.1 6379 10.0.0.2 6380");
	ASSERT_TRUE(sw);
	EXPECT_EQ(sw->name, "mymaster");
	EXPECT_EQ(sw->address, "10.0.0.2:6380"); // the new address, whatever the old one says
	EXPECT_EQ(sw->source, "+switch-master");
	// the leading sentinel's promotion, before its +switch-master
	auto pr = SentinelWatch::Announcement("+promoted-slave", "slave 10.0.0.2:6380 10.0.0.2 6380 @ mymaster 10.0.0.1 6379");
	ASSERT_TRUE(pr);
	EXPECT_EQ(pr->name, "mymaster");
	EXPECT_EQ(pr->address, "10.0.0.2:6380");
	EXPECT_FALSE(SentinelWatch::Announcement("+switch-master", "mymaster 10.0.0.1")); // not the sentinels' form
	EXPECT_FALSE(SentinelWatch::Announcement("+promoted-slave", "slave 10.0.0.2:6380 10.0.0.2 6380 # mymaster 10.0.0.1 6379"));
	EXPECT_FALSE(SentinelWatch::Announcement("+sdown", "master mymaster 10.0.0.1 6379"));
	auto channels = SentinelWatch::Channels();
	EXPECT_EQ(channels, (std::vector<std::string>{"+switch-master", "+promoted-slave"}));
}

TEST(SentinelWatch, AfterAReconnectAsksWhereEachMasterIs)
{
	EXPECT_EQ(SentinelWatch::AskCommand("mymaster"),
	          (std::vector<std::string>{"SENTINEL", "get-master-addr-by-name", "mymaster"}));
	RedisValue addr;
	addr.type = RedisValue::Type::Array;
	addr.elements = {RedisValue::Str("10.0.0.2"), RedisValue::Str("6380")};
	auto news = SentinelWatch::Answer("mymaster", addr);
	ASSERT_TRUE(news);
	EXPECT_EQ(news->address, "10.0.0.2:6380");
	EXPECT_EQ(news->name, "mymaster");
	RedisValue nil; // a sentinel that does not know the master tells nothing
	EXPECT_FALSE(SentinelWatch::Answer("mymaster", nil));
	EXPECT_FALSE(SentinelWatch::Answer("mymaster", RedisValue::Str("ERR")));
}

TEST(SentinelWatch, LogsEachStateChangeOnce)
{
	SentinelWatch w;
	EXPECT_EQ(w.GetState(), SentinelWatch::State::kIdle);
	EXPECT_EQ(w.Up("s1:1"), "watching sentinel s1:1 for new masters");
	EXPECT_EQ(w.Up("s1:1"), ""); // resubscribed where it was: nothing changed
	EXPECT_EQ(w.GetState(), SentinelWatch::State::kWatching);
	// the watched sentinel dies: one line, however many of the next attempts fail
	EXPECT_EQ(w.Down("s1:1", "Connection reset by peer"),
	          "lost the watch on sentinel s1:1 (Connection reset by peer), moving to the next sentinel");
	EXPECT_EQ(w.GetState(), SentinelWatch::State::kLost);
	EXPECT_EQ(w.Down("s2:2", "Connection refused"), "");
	EXPECT_EQ(w.Down("s1:1", "Connection refused"), "");
	EXPECT_EQ(w.Up("s3:3"), "watching sentinel s3:3 for new masters (moved from s1:1)");
	EXPECT_EQ(w.GetState(), SentinelWatch::State::kWatching);
	// lost and back on the same sentinel (restarted): said so, without a move
	EXPECT_NE(w.Down("s3:3", "closed"), "");
	EXPECT_EQ(w.Up("s3:3"), "watching sentinel s3:3 for new masters");
}

TEST(SentinelWatch, ASentinelThatNeverAnsweredIsNamedSo)
{
	SentinelWatch w;
	EXPECT_EQ(w.Down("s1:1", "Connection refused"), "cannot watch sentinel s1:1 (Connection refused), trying the next sentinel");
	EXPECT_EQ(w.Up("s2:2"), "watching sentinel s2:2 for new masters (moved from s1:1)");
}
