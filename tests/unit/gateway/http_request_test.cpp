// tests/unit/gateway/http_request_test.cpp - header limits and the path-intact check, on buffers laid out
// as libwebsockets lays out a request's path and what follows it.
#include <gtest/gtest.h>

#include <string>

#include "gateway/core/http_request.hpp"

using namespace chat_outboxd::http;
using namespace std::string_literals;

TEST(HttpRequest, FieldTooLong)
{
	EXPECT_FALSE(FieldTooLong(0));
	EXPECT_FALSE(FieldTooLong(kMaxFieldBytes - 1));
	EXPECT_TRUE(FieldTooLong(kMaxFieldBytes));
	EXPECT_TRUE(FieldTooLong(kMaxFieldBytes + 1));
	EXPECT_LT(kMaxFieldBytes, kHeaderBufferBytes);
}

TEST(HttpRequest, WholePaths)
{
	EXPECT_TRUE(PathIntact("/\0HTTP/1.1\0"s, 1, "HTTP/1.1", false));
	EXPECT_TRUE(PathIntact("/app.js\0HTTP/1.1\0"s, 7, "HTTP/1.1", false));
	// before a query one byte is skipped, whatever it holds
	EXPECT_TRUE(PathIntact("/app.js\0xv=1\0"s, 7, "v=1", true));
	EXPECT_TRUE(PathIntact("/socket.io/\0\0EIO=4\0"s, 11, "EIO=4", true));
}

TEST(HttpRequest, CutPaths)
{
	// "/%00": reported as "/", an extra NUL before the version
	EXPECT_FALSE(PathIntact("/\0\0HTTP/1.1\0"s, 1, "HTTP/1.1", false));
	EXPECT_FALSE(PathIntact("/\0\0xv=1\0"s, 1, "v=1", true));
	// "/%00x": the NUL sits inside the reported length
	EXPECT_FALSE(PathIntact("/\0x\0HTTP/1.1\0"s, 2, "HTTP/1.1", false));
	// a control character stored in the path
	EXPECT_FALSE(PathIntact("/a\x01\0HTTP/1.1\0"s, 3, "HTTP/1.1", false));
	EXPECT_FALSE(PathIntact("/a\x7f\0HTTP/1.1\0"s, 3, "HTTP/1.1", false));
	// too short to hold what should follow
	EXPECT_FALSE(PathIntact("/\0HTTP"s, 1, "HTTP/1.1", false));
	EXPECT_FALSE(PathIntact(""s, 0, "HTTP/1.1", false));
}
