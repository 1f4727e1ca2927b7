// tests/unit/common/redis_url_test.cpp - redis:// and unix:// URLs, and their redacted form.
#include <gtest/gtest.h>

#include "common/redis_url.hpp"

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

TEST(RedisUrl, SentinelHostsMasterAndDb)
{
	std::string err;
	auto u = ParseRedisUrl("redis-sentinel://app:pw@10.0.0.1:26380,sentinel-b,[::1]:26381/mymaster?db=2", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_TRUE(u->IsSentinel());
	EXPECT_EQ(u->master_name, "mymaster");
	ASSERT_EQ(u->sentinels.size(), 3u);
	EXPECT_EQ(u->sentinels[0].host, "10.0.0.1");
	EXPECT_EQ(u->sentinels[0].port, 26380);
	EXPECT_EQ(u->sentinels[1].host, "sentinel-b");
	EXPECT_EQ(u->sentinels[1].port, 26379);
	EXPECT_EQ(u->sentinels[2].host, "::1");
	EXPECT_EQ(u->sentinels[2].port, 26381);
	EXPECT_EQ(u->username, "app");
	EXPECT_EQ(u->password, "pw");
	EXPECT_EQ(u->db, 2);
	EXPECT_TRUE(u->sentinel_password.empty());
	EXPECT_EQ(u->Redacted(), "redis-sentinel://app:***@10.0.0.1:26380,sentinel-b:26379,[::1]:26381/mymaster?db=2");
}

TEST(RedisUrl, SentinelCredentialsAreSeparateAndRedacted)
{
	std::string err;
	auto u = ParseRedisUrl("redis-sentinel://h:1/m?sentinel_username=watch&sentinel_password=s%40c", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_EQ(u->sentinel_username, "watch");
	EXPECT_EQ(u->sentinel_password, "s@c");
	EXPECT_TRUE(u->password.empty());
	EXPECT_EQ(u->Redacted().find("s@c"), std::string::npos);
	EXPECT_NE(u->Redacted().find("sentinel_password=***"), std::string::npos);
	// sentinel credentials only make sense in a sentinel URL
	EXPECT_FALSE(ParseRedisUrl("redis://h:1/0?sentinel_password=x", &err));
	EXPECT_NE(err.find("sentinel_password"), std::string::npos);
}

TEST(RedisUrl, SentinelRefusals)
{
	std::string err;
	EXPECT_FALSE(ParseRedisUrl("redis-sentinel://h1:26379,h2:26379", &err));
	EXPECT_NE(err.find("names its master"), std::string::npos) << err;
	EXPECT_FALSE(ParseRedisUrl("redis-sentinel://h1:26379,h2:26379/", &err));
	EXPECT_FALSE(ParseRedisUrl("redis-sentinel://h1:26379,,h2/m", &err));
	EXPECT_NE(err.find("empty sentinel"), std::string::npos) << err;
	EXPECT_FALSE(ParseRedisUrl("redis-sentinel://h1:99999/m", &err));
	EXPECT_NE(err.find("port"), std::string::npos) << err;
	EXPECT_FALSE(ParseRedisUrl("redis-sentinel://h1/m/3", &err));
	EXPECT_NE(err.find("?db=N"), std::string::npos) << err;
	// a plain redis:// URL is no sentinel URL
	auto u = ParseRedisUrl("redis://h:1", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_FALSE(u->IsSentinel());
}

TEST(RedisUrl, TlsForms)
{
	std::string err;
	auto u = ParseRedisUrl("rediss://app:pw@cache.example.com:6380/2?cacert=/etc/ca.pem&sni=redis.internal", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_TRUE(u->tls.enabled);
	EXPECT_EQ(u->host, "cache.example.com");
	EXPECT_EQ(u->port, 6380);
	EXPECT_EQ(u->db, 2);
	EXPECT_EQ(u->tls.cacert, "/etc/ca.pem");
	EXPECT_EQ(u->tls.sni, "redis.internal");
	EXPECT_FALSE(u->tls.insecure);
	EXPECT_EQ(u->Redacted(), "rediss://app:***@cache.example.com:6380/2?cacert=/etc/ca.pem&sni=redis.internal");
	// no cacert: the system store verifies; insecure=1 turns verification off
	u = ParseRedisUrl("rediss://h?insecure=1&cert=/c.pem&key=/k.pem", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_TRUE(u->tls.cacert.empty());
	EXPECT_TRUE(u->tls.insecure);
	EXPECT_EQ(u->tls.cert, "/c.pem");
	EXPECT_EQ(u->tls.key, "/k.pem");
	u = ParseRedisUrl("rediss-sentinel://s1:26380,s2/mymaster?cacert=/ca.pem&sentinel_password=x", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_TRUE(u->IsSentinel());
	EXPECT_TRUE(u->tls.enabled);
	EXPECT_EQ(u->sentinels.size(), 2u);
	EXPECT_EQ(u->Redacted(), "rediss-sentinel://s1:26380,s2:26379/mymaster?sentinel_username=&sentinel_password=***&cacert=/ca.pem");
	u = ParseRedisUrl("redis://h:1", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_FALSE(u->tls.enabled);
}

TEST(RedisUrl, TlsRejects)
{
	std::string err;
	EXPECT_FALSE(ParseRedisUrl("redis://h?cacert=/ca.pem", &err)); // TLS options on a plaintext URL
	EXPECT_NE(err.find("rediss://"), std::string::npos);
	EXPECT_FALSE(ParseRedisUrl("rediss://h?cert=/c.pem", &err)); // a certificate without its key
	EXPECT_FALSE(ParseRedisUrl("rediss://h?insecure=yes", &err));
	EXPECT_FALSE(ParseRedisUrl("rediss://h?cacert=", &err));
}
