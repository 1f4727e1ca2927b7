// tests/unit/net/sentinel_route_test.cpp - where the daemon's Redis connections go next
// (daemon/src/net/core/sentinel_route.hpp).
#include <gtest/gtest.h>

#include "net/core/sentinel_route.hpp"

using namespace chat_outboxd;

namespace {

chat_outbox::RedisUrl
Url(const std::string &text)
{
	std::string err;
	auto u = chat_outbox::ParseRedisUrl(text, &err);
	EXPECT_TRUE(u) << err;
	return *u;
}

RedisValue
Addr(const std::string &host, const std::string &port)
{
	RedisValue v;
	v.type = RedisValue::Type::Array;
	v.elements = {RedisValue::Str(host), RedisValue::Str(port)};
	return v;
}

RedisValue
Role(const std::string &role)
{
	RedisValue v;
	v.type = RedisValue::Type::Array;
	v.elements = {RedisValue::Str(role)};
	return v;
}

} // namespace

TEST(SentinelRoute, PlainUrlAlwaysGoesToItsAddress)
{
	SentinelRoute r(Url("redis://:pw@h:7000/2"));
	EXPECT_FALSE(r.Asking());
	EXPECT_EQ(r.Next().host, "h");
	EXPECT_EQ(r.Next().port, 7000);
	r.Lost();
	EXPECT_FALSE(r.Asking());
	auto cmds = r.Commands();
	ASSERT_EQ(cmds.size(), 2u); // AUTH, SELECT: no ROLE
	EXPECT_EQ(cmds[0][0], "AUTH");
	EXPECT_EQ(cmds[1][0], "SELECT");
}

TEST(SentinelRoute, AsksThenConnectsToTheMasterWithRoleLast)
{
	SentinelRoute r(Url("redis-sentinel://:pw@s1:1,s2:2/mymaster"));
	ASSERT_TRUE(r.Asking());
	EXPECT_EQ(r.Next().host, "s1");
	EXPECT_EQ(r.Next().port, 1);
	EXPECT_TRUE(r.Next().password.empty()); // the master's password never goes to a sentinel
	EXPECT_EQ(r.Commands().back()[0], "SENTINEL");
	std::string why, notice;
	ASSERT_TRUE(r.Found(Addr("10.0.0.5", "6380"), &why, &notice)) << why;
	EXPECT_EQ(notice, "redis master 'mymaster' is at 10.0.0.5:6380");
	EXPECT_FALSE(r.Asking());
	EXPECT_EQ(r.Next().host, "10.0.0.5");
	EXPECT_EQ(r.Next().port, 6380);
	EXPECT_EQ(r.Next().password, "pw");
	EXPECT_EQ(r.Commands().front()[0], "AUTH");
	EXPECT_EQ(r.Commands().back()[0], "ROLE");
	EXPECT_TRUE(r.RoleOk(Role("master")));
}

TEST(SentinelRoute, EveryLostConnectionAsksAgainAndAFailedSentinelIsSkipped)
{
	SentinelRoute r(Url("redis-sentinel://s1:1,s2:2/m"));
	std::string why, notice;
	ASSERT_TRUE(r.Found(Addr("a", "1"), &why, &notice));
	r.Lost(); // the master went away: ask the same sentinel again
	ASSERT_TRUE(r.Asking());
	EXPECT_EQ(r.Next().host, "s1");
	r.Lost(); // s1 did not answer: s2 next
	EXPECT_EQ(r.Next().host, "s2");
	EXPECT_FALSE(r.Found(RedisValue{}, &why, &notice)); // nil: s2 does not know the master
	EXPECT_NE(why.find("does not know"), std::string::npos) << why;
	r.Lost();
	EXPECT_EQ(r.Next().host, "s1");
	notice.clear();
	ASSERT_TRUE(r.Found(Addr("b", "2"), &why, &notice));
	EXPECT_EQ(notice, "redis master 'm' is at b:2, was a:1");
}

TEST(SentinelRoute, AStaleSentinelNamingAReplicaMovesTheCursor)
{
	SentinelRoute r(Url("redis-sentinel://s1:1,s2:2/m"));
	std::string why, notice;
	ASSERT_TRUE(r.Found(Addr("a", "1"), &why, &notice));
	EXPECT_FALSE(r.RoleOk(Role("slave")));
	r.Lost();
	ASSERT_TRUE(r.Asking());
	EXPECT_EQ(r.Next().host, "s2");
	notice.clear();
	ASSERT_TRUE(r.Found(Addr("a", "1"), &why, &notice));
	EXPECT_TRUE(notice.empty()); // the same master: nothing new to log
}

// A redis-cluster:// URL (the subscriber's: any node serves classic pub/sub) goes to a seed node, and to
// the next one after each lost connection.
TEST(SentinelRoute, ClusterUrlGoesRoundItsSeedNodes)
{
	SentinelRoute r(Url("redis-cluster://:pw@a:7000,b:7001"));
	EXPECT_FALSE(r.Asking());
	EXPECT_EQ(r.Next().host, "a");
	EXPECT_EQ(r.Next().port, 7000);
	EXPECT_EQ(r.Next().password, "pw");
	EXPECT_FALSE(r.Next().IsCluster());
	r.Lost();
	EXPECT_FALSE(r.Asking());
	EXPECT_EQ(r.Next().host, "b");
	r.Lost();
	EXPECT_EQ(r.Next().host, "a");
}

TEST(SentinelRoute, ASwitchOfOurMasterElsewhereSendsTheLinkBackToAsking)
{
	SentinelRoute r(Url("redis-sentinel://s1:1,s2:2/mymaster"));
	EXPECT_TRUE(r.Watching());
	const std::string sw = "+switch-master", promoted = "+promoted-slave";
	EXPECT_FALSE(r.SwitchedAway(sw, "mymaster 10.0.0.1 6379 10.0.0.2 6379")); // asking: the query finds it anyway
	std::string why, notice;
	ASSERT_TRUE(r.Found(Addr("10.0.0.1", "6379"), &why, &notice));
	EXPECT_TRUE(r.SwitchedAway(sw, "mymaster 10.0.0.1 6379 10.0.0.2 6379"));
	EXPECT_TRUE(r.SwitchedAway(sw, "mymaster 10.0.0.9 1 10.0.0.2 6379"));     // whatever the old address says
	EXPECT_FALSE(r.SwitchedAway(sw, "mymaster 10.0.0.2 6379 10.0.0.1 6379")); // to where we are
	EXPECT_FALSE(r.SwitchedAway(sw, "other 10.0.0.1 6379 10.0.0.2 6379"));    // another master's switch
	EXPECT_FALSE(r.SwitchedAway(sw, "mymaster 10.0.0.1"));                    // not the sentinels' form
	// the leading sentinel's promotion, before its +switch-master
	EXPECT_TRUE(r.SwitchedAway(promoted, "slave 10.0.0.2:6379 10.0.0.2 6379 @ mymaster 10.0.0.1 6379"));
	EXPECT_FALSE(r.SwitchedAway(promoted, "slave 10.0.0.2:6379 10.0.0.2 6379 @ other 10.0.0.1 6379"));
	EXPECT_FALSE(r.SwitchedAway(promoted, "slave 10.0.0.1:6379 10.0.0.1 6379 @ mymaster 10.0.0.3 6379"));
	EXPECT_FALSE(r.SwitchedAway("+sdown", "master mymaster 10.0.0.1 6379"));
	EXPECT_FALSE(SentinelRoute(Url("redis://h:1")).Watching());
}

TEST(SentinelRoute, ReadonlyAndUnblockedMeanTheMasterMoved)
{
	EXPECT_TRUE(SentinelRoute::MasterMovedError("READONLY You can't write against a read only replica."));
	EXPECT_TRUE(SentinelRoute::MasterMovedError("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"));
	EXPECT_FALSE(SentinelRoute::MasterMovedError("ERR unknown command"));
	EXPECT_FALSE(SentinelRoute::MasterMovedError("NOSCRIPT No matching script"));
}
