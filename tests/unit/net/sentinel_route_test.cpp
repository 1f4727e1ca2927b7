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
	const MasterNews there{"mymaster", "10.0.0.2:6379", "+switch-master"};
	EXPECT_FALSE(r.SwitchedAway(there)); // asking: the query finds it anyway
	std::string why, notice;
	ASSERT_TRUE(r.Found(Addr("10.0.0.1", "6379"), &why, &notice));
	EXPECT_TRUE(r.SwitchedAway(there));
	EXPECT_FALSE(r.SwitchedAway(MasterNews{"mymaster", "10.0.0.1:6379", "get-master-addr-by-name"})); // where we are
	EXPECT_FALSE(r.SwitchedAway(MasterNews{"other", "10.0.0.2:6379", "+switch-master"}));             // another master
	EXPECT_FALSE(SentinelRoute(Url("redis://h:1")).Watching());
	EXPECT_FALSE(SentinelRoute(Url("redis://h:1")).SwitchedAway(there));
}

TEST(SentinelRoute, ToSentinelsWatchesEachSentinelInTurnWithTheSentinelCredentials)
{
	auto r = SentinelRoute::ToSentinels(
	    Url("redis-sentinel://mu:mp@s1:1,s2:2,s3:3/mymaster?sentinel_username=su&sentinel_password=sp"));
	EXPECT_FALSE(r.Asking());
	EXPECT_FALSE(r.Watching()); // the watch itself follows nothing
	EXPECT_EQ(r.Next().host, "s1");
	EXPECT_EQ(r.Next().port, 1);
	EXPECT_EQ(r.Next().username, "su");
	EXPECT_EQ(r.Next().password, "sp");
	auto cmds = r.Commands();
	ASSERT_FALSE(cmds.empty());
	EXPECT_EQ(cmds[0][0], "AUTH");
	for (const auto &c : cmds)
		EXPECT_NE(c[0], "ROLE"); // a sentinel is no master
	r.Lost();                    // the watched sentinel died: the next one
	EXPECT_EQ(r.Next().host, "s2");
	r.Lost();
	EXPECT_EQ(r.Next().host, "s3");
	r.Lost(); // and round again
	EXPECT_EQ(r.Next().host, "s1");
	EXPECT_FALSE(SentinelRoute::ToSentinels(Url("redis-sentinel://s1:1/m")).Next().tls.enabled);
	EXPECT_TRUE(SentinelRoute::ToSentinels(Url("rediss-sentinel://s1:1/m")).Next().tls.enabled);
}

TEST(SentinelRoute, ReadonlyAndUnblockedMeanTheMasterMoved)
{
	EXPECT_TRUE(SentinelRoute::MasterMovedError("READONLY You can't write against a read only replica."));
	EXPECT_TRUE(SentinelRoute::MasterMovedError("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"));
	EXPECT_FALSE(SentinelRoute::MasterMovedError("ERR unknown command"));
	EXPECT_FALSE(SentinelRoute::MasterMovedError("NOSCRIPT No matching script"));
}
