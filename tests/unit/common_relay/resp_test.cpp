// tests/unit/common_relay/resp_test.cpp - Redis requests encoded as RESP arrays.
#include <gtest/gtest.h>

#include <string>

#include "common/relay/resp.hpp"

using namespace chat_outbox;

TEST(Resp, Commands)
{
	std::string out;
	RespCommand(&out, 3).Arg("SET").Arg("k").Arg(std::string("a\r\nb"));
	EXPECT_TRUE(out == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n");
	out.clear();
	RespCommand(&out, 2).Arg("SELECT").Arg(12LL);
	EXPECT_TRUE(out == "*2\r\n$6\r\nSELECT\r\n$2\r\n12\r\n");
}
