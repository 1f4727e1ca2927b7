// tests/unit/gateway/http_request_test.cpp - header limits, the path-intact check (on buffers laid out as
// libwebsockets lays out a request's path and what follows it), and the scan of a connection's first bytes.
#include <gtest/gtest.h>

#include <string>

#include "gateway/http/core/http_request.hpp"

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

TEST(HttpRequestHead, WholeHeads)
{
	EXPECT_EQ(ScanHead("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), HeadScan::Whole);
	EXPECT_EQ(ScanHead("GET /healthz HTTP/1.1\n\n"), HeadScan::Whole);
	// a body after the head is not looked at
	EXPECT_EQ(ScanHead("POST /socket.io/?EIO=4 HTTP/1.1\r\nContent-Length: 5\r\n\r\n%00\n\n"), HeadScan::Whole);
	// a NUL percent-encoded in a header is for the route to judge
	EXPECT_EQ(ScanHead("GET / HTTP/1.1\r\nX-A: %00\r\n\r\n"), HeadScan::Whole);
}

TEST(HttpRequestHead, IncompleteHeads)
{
	EXPECT_EQ(ScanHead(""), HeadScan::Incomplete);
	EXPECT_EQ(ScanHead("GET /a%0"), HeadScan::Incomplete);
	EXPECT_EQ(ScanHead("GET / HTTP/1.1\r\nHost: x\r\n"), HeadScan::Incomplete);
	EXPECT_EQ(ScanHead("GET / HTTP/1.1\r\nHost: x\r\n\r"), HeadScan::Incomplete);
}

TEST(HttpRequestHead, BadTargets)
{
	for (const char *line : {"GET /a%00b HTTP/1.1\r\n", "GET /%00 HTTP/1.1\r\n", "GET /index.html%00.png HTTP/1.1\r\n",
	                         "GET /healthz?a=%00 HTTP/1.1\r\n", "GET /x?a%00=1 HTTP/1.1\r\n", "GET /a%00b\r\n"})
		EXPECT_EQ(ScanHead(line), HeadScan::BadTarget) << line;
	// judged as soon as the request line is in, before the rest of the head
	EXPECT_EQ(ScanHead("GET /a%00b HTTP/1.1\r\nHost: "), HeadScan::BadTarget);
	EXPECT_EQ(ScanHead("GET /a%000 HTTP/1.1\r\n\r\n"), HeadScan::BadTarget);
	EXPECT_EQ(ScanHead("GET /a%0a0 HTTP/1.1\r\n\r\n"), HeadScan::Whole);
}

TEST(HttpRequestHead, TooLarge)
{
	std::string head = "GET / HTTP/1.1\r\nX-A: ";
	head += std::string(kMaxHeadBytes - head.size() - 4, 'a') + "\r\n\r\n";
	ASSERT_EQ(head.size(), kMaxHeadBytes);
	EXPECT_EQ(ScanHead(head), HeadScan::Whole);
	std::string over = "GET / HTTP/1.1\r\nX-A: a" + head.substr(21);
	ASSERT_EQ(over.size(), kMaxHeadBytes + 1);
	EXPECT_EQ(ScanHead(over), HeadScan::TooLarge);
	// a head that has not ended by the bound never will within it
	EXPECT_EQ(ScanHead(std::string(kMaxHeadBytes - 1, 'a')), HeadScan::Incomplete);
	EXPECT_EQ(ScanHead(std::string(kMaxHeadBytes, 'a')), HeadScan::TooLarge);
}

TEST(HttpRequestHead, TooManyFields)
{
	auto with_headers = [](size_t n) {
		std::string h = "GET / HTTP/1.1\r\n";
		for (size_t i = 0; i < n; i++)
			h += "Cookie: a\r\n";
		return h + "\r\n";
	};
	EXPECT_EQ(ScanHead(with_headers(kMaxHeadFields)), HeadScan::Whole);
	EXPECT_EQ(ScanHead(with_headers(kMaxHeadFields + 1)), HeadScan::TooLarge);
	auto with_args = [](size_t n, size_t headers) {
		std::string h = "GET /healthz?a";
		for (size_t i = 1; i < n; i++)
			h += "&a";
		h += " HTTP/1.1\r\n";
		for (size_t i = 0; i < headers; i++)
			h += "Host: x\r\n";
		return h + "\r\n";
	};
	EXPECT_EQ(ScanHead(with_args(kMaxHeadFields, 0)), HeadScan::Whole);
	EXPECT_EQ(ScanHead(with_args(kMaxHeadFields + 1, 0)), HeadScan::TooLarge);
	// header lines and query arguments count together
	EXPECT_EQ(ScanHead(with_args(kMaxHeadFields - 1, 1)), HeadScan::Whole);
	EXPECT_EQ(ScanHead(with_args(kMaxHeadFields - 1, 2)), HeadScan::TooLarge);
}
