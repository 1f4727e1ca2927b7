// tests/unit/common/redis_url_test.cpp - redis:// and unix:// URLs, and their redacted form.
#include <gtest/gtest.h>

#include "redis_url.hpp"

using chat_outbox::ParseRedisUrl;

TEST(RedisUrl, HostPortDb)
{
	std::string err;
	auto u = ParseRedisUrl("redis://10.0.0.5:6380/3", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_EQ(u->host, "10.0.0.5");
	EXPECT_EQ(u->port, 6380);
	EXPECT_EQ(u->db, 3);
	EXPECT_TRUE(u->password.empty());
	u = ParseRedisUrl("redis://localhost", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_EQ(u->port, 6379);
	EXPECT_EQ(u->db, 0);
}

TEST(RedisUrl, PasswordAndAclUser)
{
	std::string err;
	auto u = ParseRedisUrl("redis://:s%40cret@h:1", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_TRUE(u->username.empty());
	EXPECT_EQ(u->password, "s@cret");
	u = ParseRedisUrl("redis://daemon:pw@h:1/2", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_EQ(u->username, "daemon");
	EXPECT_EQ(u->password, "pw");
	EXPECT_EQ(u->Redacted().find("pw"), std::string::npos);
}

TEST(RedisUrl, UnixAndIpv6)
{
	std::string err;
	auto u = ParseRedisUrl("unix:///run/redis.sock?db=4", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_EQ(u->unix_socket, "/run/redis.sock");
	EXPECT_EQ(u->db, 4);
	u = ParseRedisUrl("redis://[::1]:7000", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_EQ(u->host, "::1");
	EXPECT_EQ(u->port, 7000);
}

TEST(RedisUrl, Rejects)
{
	std::string err;
	EXPECT_FALSE(ParseRedisUrl("http://h", &err));
	EXPECT_FALSE(err.empty());
	EXPECT_FALSE(ParseRedisUrl("redis://h:99999", &err));
	EXPECT_FALSE(ParseRedisUrl("redis://h:1/x", &err));
	EXPECT_FALSE(ParseRedisUrl("redis://:%zz@h", &err));
}
