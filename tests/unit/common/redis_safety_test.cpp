// tests/unit/common/redis_safety_test.cpp - the warning about a Redis that may lose or evict jobs.
#include <gtest/gtest.h>

#include <string>

#include "common/redis_safety.hpp"

using namespace chat_outbox;

TEST(RedisSafety, Warnings)
{
	EXPECT_TRUE(RedisSafetyWarning("yes", "noeviction").empty());
	EXPECT_TRUE(RedisSafetyWarning("", "").empty()); // CONFIG denied: no guess
	EXPECT_TRUE(RedisSafetyWarning("no", "noeviction").find("appendonly") != std::string::npos);
	EXPECT_TRUE(RedisSafetyWarning("yes", "allkeys-lru").find("maxmemory-policy") != std::string::npos);
	EXPECT_TRUE(RedisSafetyWarning(RedisDurability{"yes", "everysec", "noeviction"}).empty());
	EXPECT_TRUE(RedisSafetyWarning(RedisDurability{"yes", "always", "noeviction"}).empty());
	EXPECT_TRUE(RedisSafetyWarning(RedisDurability{"yes", "", "noeviction"}).empty()); // unread: no guess
	EXPECT_TRUE(RedisSafetyWarning(RedisDurability{"yes", "no", "noeviction"}).find("appendfsync is \"no\"") !=
	            std::string::npos);
	// without AOF, fsync does not matter: one sentence about appendonly
	EXPECT_TRUE(RedisSafetyWarning(RedisDurability{"no", "no", "noeviction"}).find("appendfsync") == std::string::npos);
}
