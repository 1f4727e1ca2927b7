// tests/unit/gateway/jwt_test.cpp - HS256 verification: claims, expiry, audience and issuer, forgery
// attempts, canonical base64url.
#include <gtest/gtest.h>

#include "gateway/auth/core/jwt.hpp"

using namespace chat_outboxd::jwt;

namespace {
const int64_t kNow = 1700000000;
std::string
JwtVerdict(const std::string &token, const Policy &policy = {"s3cret"})
{
	Claims c;
	std::string reason;
	return Verify(token, policy, kNow, &c, &reason) ? "ok" : reason;
}

// WithClaims signs {"chats":[1],"exp":...} plus the given members (JSON text without braces).
std::string
WithClaims(const std::string &extra)
{
	return Sign(R"({"chats":[1],"exp":1700000100,)" + extra + "}", "s3cret");
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
	ASSERT_TRUE(Verify(token, {"s3cret"}, kNow, &c, &reason)) << reason;
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
	EXPECT_EQ(JwtVerdict(node), "ok");
}

TEST(Jwt, RefusesBadTokens)
{
	EXPECT_EQ(JwtVerdict(""), "missing token");
	EXPECT_EQ(JwtVerdict("abc"), "malformed token");
	EXPECT_EQ(JwtVerdict("a.b.c.d"), "malformed token");
	EXPECT_EQ(JwtVerdict("!!.e30.xx"), "malformed token");
	std::string good = Sign(R"({"chats":[1],"exp":1700000100})", "s3cret");
	EXPECT_EQ(JwtVerdict(good, {"other"}), "bad signature");
	std::string tampered = good;
	tampered[tampered.find('.') + 3] ^= 1;
	EXPECT_NE(JwtVerdict(tampered), "ok");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":[1],"exp":1699999999})", "s3cret")), "token expired");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":[1],"exp":1700000000})", "s3cret")), "token expired");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":[1]})", "s3cret")), "exp missing");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":[1],"exp":"soon"})", "s3cret")), "bad exp");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":[1],"exp":1700000100,"nbf":1700000050})", "s3cret")), "token not yet valid");
	EXPECT_EQ(JwtVerdict(Sign(R"({"exp":1700000100})", "s3cret")), "chats missing");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":["1"],"exp":1700000100})", "s3cret")), "bad chats");
	// present but not an array: the wrong type, not a missing claim
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":"1","exp":1700000100})", "s3cret")), "bad chats");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":"[1]","exp":1700000100})", "s3cret")), "bad chats");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":1,"exp":1700000100})", "s3cret")), "bad chats");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":null,"exp":1700000100})", "s3cret")), "bad chats");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":{},"exp":1700000100})", "s3cret")), "bad chats");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":[1.5],"exp":1700000100})", "s3cret")), "bad chats");
	EXPECT_EQ(JwtVerdict(Sign(R"([1])", "s3cret")), "malformed token");
}

TEST(Jwt, RefusesAlgNoneAndOtherAlgorithms)
{
	std::string payload = Base64UrlEncode(R"({"chats":[1],"exp":1700000100})");
	EXPECT_EQ(JwtVerdict(Base64UrlEncode(R"({"alg":"none"})") + "." + payload + "."), "unsupported alg");
	EXPECT_EQ(JwtVerdict(Base64UrlEncode(R"({"alg":"HS512"})") + "." + payload + ".AAAA"), "unsupported alg");
	EXPECT_EQ(JwtVerdict(Base64UrlEncode(R"({"typ":"JWT"})") + "." + payload + ".AAAA"), "unsupported alg");
}

TEST(Jwt, Base64UrlDecodeAcceptsOnlyTheCanonicalSpelling)
{
	std::string out;
	ASSERT_TRUE(Base64UrlDecode("QQ", &out));
	EXPECT_EQ(out, "A");
	ASSERT_TRUE(Base64UrlDecode("QUI", &out));
	EXPECT_EQ(out, "AB");
	// Same bytes, but unused low bits set in the last character: another spelling of "A" / "AB".
	EXPECT_FALSE(Base64UrlDecode("QR", &out));
	EXPECT_FALSE(Base64UrlDecode("QX", &out));
	EXPECT_FALSE(Base64UrlDecode("QUJ", &out));
	EXPECT_FALSE(Base64UrlDecode("QUL", &out));
	// Padding, the standard alphabet and whitespace are not base64url as JWS writes it.
	EXPECT_FALSE(Base64UrlDecode("QQ==", &out));
	EXPECT_FALSE(Base64UrlDecode("QQ=", &out));
	EXPECT_FALSE(Base64UrlDecode("QUI=", &out));
	EXPECT_FALSE(Base64UrlDecode("+/8", &out));
	EXPECT_FALSE(Base64UrlDecode("QU I", &out));
	EXPECT_FALSE(Base64UrlDecode("QUI\n", &out));
	// Every encoding our encoder makes decodes: the rule refuses no canonical text.
	for (int b = 0; b < 256; b++) {
		std::string one(1, char(b)), two = one + char(255 - b);
		ASSERT_TRUE(Base64UrlDecode(Base64UrlEncode(one), &out)) << b;
		ASSERT_TRUE(Base64UrlDecode(Base64UrlEncode(two), &out)) << b;
		EXPECT_EQ(out, two);
	}
}

TEST(Jwt, RefusesATokenSpelledAnotherWay)
{
	std::string good = Sign(R"({"chats":[1],"exp":1700000100})", "s3cret");
	ASSERT_EQ(JwtVerdict(good), "ok");
	// The 32-byte signature is 43 characters; the last one carries 2 unused bits. Setting one gives a
	// different token with the same decoded signature: a second valid spelling unless refused.
	const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	std::string other = good;
	other.back() = alphabet[alphabet.find(good.back()) ^ 1];
	EXPECT_EQ(JwtVerdict(other), "malformed token");
	EXPECT_EQ(JwtVerdict(good + "="), "malformed token");
	EXPECT_EQ(JwtVerdict(good.substr(0, good.find('.')) + "=" + good.substr(good.find('.'))), "malformed token");
	std::string with_plus = good;
	with_plus[good.rfind('.') + 1] = '+';
	EXPECT_EQ(JwtVerdict(with_plus), "malformed token");
}

TEST(Jwt, ChecksTheAudienceWhenTheSettingNamesOne)
{
	const Policy aud{"s3cret", "chat-clients"};
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":"chat-clients")"), aud), "ok");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":["billing","chat-clients"])"), aud), "ok");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":[1],"exp":1700000100})", "s3cret"), aud), "aud missing");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":"billing")"), aud), "wrong aud");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":"chat-clients-x")"), aud), "wrong aud");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":["billing"])"), aud), "wrong aud");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":[])"), aud), "wrong aud");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":7)"), aud), "bad aud");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":["chat-clients",7])"), aud), "bad aud");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":null)"), aud), "bad aud");
	// Unset: aud is not looked at, whatever it holds.
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":"billing")")), "ok");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":7)")), "ok");
}

TEST(Jwt, ChecksTheIssuerWhenTheSettingNamesOne)
{
	const Policy iss{"s3cret", "", "https://backend.example"};
	EXPECT_EQ(JwtVerdict(WithClaims(R"("iss":"https://backend.example")"), iss), "ok");
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":[1],"exp":1700000100})", "s3cret"), iss), "iss missing");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("iss":"https://backend.example/")"), iss), "wrong iss");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("iss":["https://backend.example"])"), iss), "bad iss");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("iss":"other")")), "ok");
	// Both set: both must match.
	const Policy both{"s3cret", "chat-clients", "https://backend.example"};
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":"chat-clients","iss":"https://backend.example")"), both), "ok");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("aud":"chat-clients")"), both), "iss missing");
	EXPECT_EQ(JwtVerdict(WithClaims(R"("iss":"https://backend.example")"), both), "aud missing");
	// The signature is checked first: a forged token learns nothing about the expected values.
	EXPECT_EQ(JwtVerdict(Sign(R"({"chats":[1],"exp":1700000100})", "not-the-secret"), both), "bad signature");
}
