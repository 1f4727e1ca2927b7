// tests/unit/common/redis_handshake_test.cpp - the commands a new Redis connection sends first,
// for each kind of redis:// URL.
#include "common/redis_handshake.hpp"

#include <gtest/gtest.h>

using namespace chat_outbox;
using Cmds = std::vector<std::vector<std::string>>;

namespace {

Cmds
For(const std::string &url)
{
	std::string error;
	auto parsed = ParseRedisUrl(url, &error);
	EXPECT_TRUE(parsed) << url << ": " << error;
	return parsed ? HandshakeCommands(*parsed) : Cmds{};
}

} // namespace

TEST(RedisHandshake, NothingForAnOpenRedisOnDbZero)
{
	EXPECT_EQ(For("redis://127.0.0.1:6379"), Cmds{});
	EXPECT_EQ(For("redis://127.0.0.1:6379/0"), Cmds{});
	EXPECT_EQ(For("unix:///tmp/redis.sock"), Cmds{});
}

TEST(RedisHandshake, AuthWithThePasswordAloneForTheDefaultUser)
{
	EXPECT_EQ(For("redis://:s3cret@host"), (Cmds{{"AUTH", "s3cret"}}));
}

TEST(RedisHandshake, AuthWithUserAndPasswordForAnAclUser)
{
	EXPECT_EQ(For("redis://relay:p%40ss@host:6380"), (Cmds{{"AUTH", "relay", "p@ss"}}));
}

TEST(RedisHandshake, SelectAfterAuthWhenTheDbIsNotZero)
{
	EXPECT_EQ(For("redis://u:p@host/3"), (Cmds{{"AUTH", "u", "p"}, {"SELECT", "3"}}));
	EXPECT_EQ(For("redis://host/5"), (Cmds{{"SELECT", "5"}}));
	EXPECT_EQ(For("unix:///tmp/redis.sock?db=2"), (Cmds{{"SELECT", "2"}}));
}
