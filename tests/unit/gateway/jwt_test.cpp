// tests/unit/gateway/jwt_test.cpp - HS256 verification: claims, expiry, forgery attempts.
#include <gtest/gtest.h>

#include "gateway/core/jwt.hpp"

using namespace chat_outboxd::jwt;

namespace {
const int64_t kNow = 1700000000;
std::string
Verdict(const std::string &token, const std::string &secret = "s3cret")
{
	Claims c;
	std::string reason;
	return Verify(token, secret, kNow, &c, &reason) ? "ok" : reason;
}
} // namespace

TEST(Jwt, Base64UrlRoundTrips)
{
	for (std::string s : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar", std::string("\xff\xfe\x00\x01", 4)}) {
		std::string back;
		ASSERT_TRUE(Base64UrlDecode(Base64UrlEncode(s), &back));
		EXPECT_EQ(back, s);
	}
	EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
	std::string out;
	EXPECT_FALSE(Base64UrlDecode("a", &out));
	EXPECT_FALSE(Base64UrlDecode("ab+/", &out));
	EXPECT_FALSE(Base64UrlDecode("ab==", &out));
}

TEST(Jwt, AcceptsAValidTokenAndNormalisesChats)
{
	std::string token = Sign(R"({"sub":"u1","chats":[42,7,42],"exp":1700000100})", "s3cret");
	Claims c;
	std::string reason;
	ASSERT_TRUE(Verify(token, "s3cret", kNow, &c, &reason)) << reason;
	EXPECT_EQ(c.chats, (std::vector<int64_t>{7, 42}));
	EXPECT_EQ(c.exp, 1700000100);
	EXPECT_EQ(c.sub, "u1");
}

TEST(Jwt, MatchesATokenMadeByNode)
{
	// Made with Node's crypto.createHmac('sha256','s3cret') and base64url over the same header and payload.
	const std::string node = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJjaGF0cyI6WzFdLCJleHAiOjE3MDAwMDAxMDB9."
	                         "pyRE9t9cxnEucfM1KvDTaZbNFAQThJ1aG3UdEfoMa9I";
	EXPECT_EQ(Sign(R"({"chats":[1],"exp":1700000100})", "s3cret"), node);
	EXPECT_EQ(Verdict(node), "ok");
}

TEST(Jwt, RefusesBadTokens)
{
	EXPECT_EQ(Verdict(""), "missing token");
	EXPECT_EQ(Verdict("abc"), "malformed token");
	EXPECT_EQ(Verdict("a.b.c.d"), "malformed token");
	EXPECT_EQ(Verdict("!!.e30.xx"), "malformed token");
	std::string good = Sign(R"({"chats":[1],"exp":1700000100})", "s3cret");
	EXPECT_EQ(Verdict(good, "other"), "bad signature");
	std::string tampered = good;
	tampered[tampered.find('.') + 3] ^= 1;
	EXPECT_NE(Verdict(tampered), "ok");
	EXPECT_EQ(Verdict(Sign(R"({"chats":[1],"exp":1699999999})", "s3cret")), "token expired");
	EXPECT_EQ(Verdict(Sign(R"({"chats":[1],"exp":1700000000})", "s3cret")), "token expired");
	EXPECT_EQ(Verdict(Sign(R"({"chats":[1]})", "s3cret")), "exp missing");
	EXPECT_EQ(Verdict(Sign(R"({"chats":[1],"exp":"soon"})", "s3cret")), "bad exp");
	EXPECT_EQ(Verdict(Sign(R"({"chats":[1],"exp":1700000100,"nbf":1700000050})", "s3cret")), "token not yet valid");
	EXPECT_EQ(Verdict(Sign(R"({"exp":1700000100})", "s3cret")), "chats missing");
	EXPECT_EQ(Verdict(Sign(R"({"chats":["1"],"exp":1700000100})", "s3cret")), "bad chats");
	EXPECT_EQ(Verdict(Sign(R"({"chats":[1.5],"exp":1700000100})", "s3cret")), "bad chats");
	EXPECT_EQ(Verdict(Sign(R"([1])", "s3cret")), "malformed token");
}

TEST(Jwt, RefusesAlgNoneAndOtherAlgorithms)
{
	std::string payload = Base64UrlEncode(R"({"chats":[1],"exp":1700000100})");
	EXPECT_EQ(Verdict(Base64UrlEncode(R"({"alg":"none"})") + "." + payload + "."), "unsupported alg");
	EXPECT_EQ(Verdict(Base64UrlEncode(R"({"alg":"HS512"})") + "." + payload + ".AAAA"), "unsupported alg");
	EXPECT_EQ(Verdict(Base64UrlEncode(R"({"typ":"JWT"})") + "." + payload + ".AAAA"), "unsupported alg");
}
