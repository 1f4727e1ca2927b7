// tests/unit/common/redis_sentinel_test.cpp - the pure half of Sentinel discovery.
#include <gtest/gtest.h>

#include "common/redis_sentinel.hpp"

using namespace chat_outbox;

TEST(RedisSentinel, QueryAuthenticatesToSentinelsOnlyWithSentinelCredentials)
{
	std::string err;
	auto u = ParseRedisUrl("redis-sentinel://app:pw@h:1/mymaster", &err);
	ASSERT_TRUE(u) << err;
	auto cmds = SentinelQueryCommands(*u);
	ASSERT_EQ(cmds.size(), 1u);
	EXPECT_EQ(cmds[0], (std::vector<std::string>{"SENTINEL", "get-master-addr-by-name", "mymaster"}));
	u = ParseRedisUrl("redis-sentinel://h:1/mymaster?sentinel_username=w&sentinel_password=p", &err);
	ASSERT_TRUE(u) << err;
	cmds = SentinelQueryCommands(*u);
	ASSERT_EQ(cmds.size(), 2u);
	EXPECT_EQ(cmds[0], (std::vector<std::string>{"AUTH", "w", "p"}));
}

TEST(RedisSentinel, MasterFromReply)
{
	std::string err;
	auto m = MasterFromReply(false, {"127.0.0.1", "6390"}, "m", &err);
	ASSERT_TRUE(m) << err;
	EXPECT_EQ(m->host, "127.0.0.1");
	EXPECT_EQ(m->port, 6390);
	EXPECT_FALSE(MasterFromReply(true, {}, "m", &err));
	EXPECT_NE(err.find("'m'"), std::string::npos);
	EXPECT_FALSE(MasterFromReply(false, {"h", "x"}, "m", &err));
	EXPECT_FALSE(MasterFromReply(false, {"h"}, "m", &err));
	EXPECT_FALSE(MasterFromReply(false, {"h", "0"}, "m", &err));
}

TEST(RedisSentinel, TlsReachesSentinelsAndMaster)
{
	std::string err;
	auto u = ParseRedisUrl("rediss-sentinel://app:pw@s1:26380/m?cacert=/ca.pem&sni=redis.internal", &err);
	ASSERT_TRUE(u) << err;
	RedisUrl s = AtSentinel(*u, u->sentinels[0]);
	EXPECT_EQ(s.host, "s1");
	EXPECT_EQ(s.port, 26380);
	EXPECT_TRUE(s.tls.enabled);
	EXPECT_EQ(s.tls.cacert, "/ca.pem");
	EXPECT_TRUE(s.password.empty()); // the master's credentials never go to a sentinel
	RedisUrl m = AtMaster(*u, {"10.1.1.1", 6400});
	EXPECT_TRUE(m.tls.enabled);
	EXPECT_EQ(m.tls.sni, "redis.internal");
	u = ParseRedisUrl("redis-sentinel://s1/m", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_FALSE(AtSentinel(*u, u->sentinels[0]).tls.enabled);
}

TEST(RedisSentinel, AtMasterKeepsCredentialsAndDb)
{
	std::string err;
	auto u = ParseRedisUrl("redis-sentinel://app:pw@h:1/m?db=3", &err);
	ASSERT_TRUE(u) << err;
	RedisUrl at = AtMaster(*u, {"10.1.1.1", 6400});
	EXPECT_EQ(at.host, "10.1.1.1");
	EXPECT_EQ(at.port, 6400);
	EXPECT_EQ(at.password, "pw");
	EXPECT_EQ(at.db, 3);
	EXPECT_TRUE(RoleIsMaster("master"));
	EXPECT_FALSE(RoleIsMaster("slave"));
}

TEST(RedisSentinel, DiscoverNamesEverySentinelThatFailed)
{
	std::string err;
	// port 1 on loopback: nothing listens there, the connect is refused at once
	auto u = ParseRedisUrl("redis-sentinel://127.0.0.1:1,127.0.0.1:2/m", &err);
	ASSERT_TRUE(u) << err;
	size_t cursor = 1;
	EXPECT_FALSE(DiscoverMaster(*u, 500, &cursor, &err));
	EXPECT_NE(err.find("127.0.0.1:1"), std::string::npos) << err;
	EXPECT_NE(err.find("127.0.0.1:2"), std::string::npos) << err;
	EXPECT_EQ(cursor, 1u);
}
