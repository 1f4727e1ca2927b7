// tests/unit/common/listen_address_test.cpp - the listen settings (--listen, --metrics-listen) as host and port.
#include <gtest/gtest.h>

#include "common/process/listen_address.hpp"

using namespace chat_outbox;

namespace {
bool
Parse(const std::string &s, std::string *host, int *port)
{
	*host = "unset";
	*port = -1;
	return ParseListenAddress(s, host, port);
}
} // namespace

TEST(ListenAddress, HostAndPort)
{
	std::string host;
	int port;
	ASSERT_TRUE(Parse("127.0.0.1:8080", &host, &port));
	EXPECT_EQ(host, "127.0.0.1");
	EXPECT_EQ(port, 8080);
	ASSERT_TRUE(Parse("[::1]:9", &host, &port));
	EXPECT_EQ(host, "::1");
	EXPECT_EQ(port, 9);
	ASSERT_TRUE(Parse(":65535", &host, &port));
	EXPECT_EQ(host, "");
	EXPECT_EQ(port, 65535);
	ASSERT_TRUE(Parse("gateway.example:1", &host, &port));
	EXPECT_EQ(host, "gateway.example");
}

TEST(ListenAddress, RefusesWhatIsNotHostColonPort)
{
	std::string host;
	int port;
	EXPECT_FALSE(Parse("8080", &host, &port));
	EXPECT_FALSE(Parse("127.0.0.1:", &host, &port));
	EXPECT_FALSE(Parse("127.0.0.1:0", &host, &port));
	EXPECT_FALSE(Parse("127.0.0.1:65536", &host, &port));
	EXPECT_FALSE(Parse("127.0.0.1:123456", &host, &port));
	EXPECT_FALSE(Parse("127.0.0.1:+80", &host, &port));
	EXPECT_FALSE(Parse("127.0.0.1:8o", &host, &port));
	EXPECT_FALSE(Parse("off", &host, &port));
}

TEST(ListenAddress, AnyInterface)
{
	EXPECT_TRUE(AnyInterface(""));
	EXPECT_TRUE(AnyInterface("0.0.0.0"));
	EXPECT_TRUE(AnyInterface("*"));
	EXPECT_FALSE(AnyInterface("127.0.0.1"));
	EXPECT_FALSE(AnyInterface("::"));
}
