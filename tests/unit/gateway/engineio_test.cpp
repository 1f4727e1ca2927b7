// tests/unit/gateway/engineio_test.cpp - the Engine.IO codec against the captured wire examples.
#include <gtest/gtest.h>

#include "gateway/engineio/core/engineio.hpp"

using namespace chat_outboxd::eio;

TEST(EngineIo, DecodesEveryPacketType)
{
	Packet p;
	ASSERT_TRUE(DecodePacket("42[\"x\"]", &p));
	EXPECT_EQ(p.type, PacketType::Message);
	EXPECT_EQ(p.data, "2[\"x\"]");
	ASSERT_TRUE(DecodePacket("2probe", &p));
	EXPECT_EQ(p.type, PacketType::Ping);
	EXPECT_EQ(p.data, "probe");
	ASSERT_TRUE(DecodePacket("3", &p));
	EXPECT_EQ(p.type, PacketType::Pong);
	EXPECT_TRUE(p.data.empty());
	EXPECT_TRUE(DecodePacket("6", &p));
}

TEST(EngineIo, RefusesUnknownEmptyAndBinary)
{
	Packet p;
	EXPECT_FALSE(DecodePacket("", &p));
	EXPECT_FALSE(DecodePacket("7", &p));
	EXPECT_FALSE(DecodePacket("bAQID", &p));
	EXPECT_FALSE(DecodePacket("x", &p));
}

TEST(EngineIo, SplitsAndJoinsPollingPayloads)
{
	std::vector<std::string_view> recs;
	ASSERT_TRUE(SplitPayload("40{\"token\":\"a\"}\x1e"
	                         "3\x1e"
	                         "42[\"m\"]",
	                         &recs));
	ASSERT_EQ(recs.size(), 3u);
	EXPECT_EQ(recs[0], "40{\"token\":\"a\"}");
	EXPECT_EQ(recs[1], "3");
	EXPECT_EQ(recs[2], "42[\"m\"]");
	ASSERT_TRUE(SplitPayload("1", &recs));
	EXPECT_EQ(recs.size(), 1u);
	EXPECT_FALSE(SplitPayload("", &recs));
	EXPECT_FALSE(SplitPayload("3\x1e", &recs));
	EXPECT_FALSE(SplitPayload("\x1e"
	                          "3",
	                          &recs));
	EXPECT_FALSE(SplitPayload("3\x1e\x1e"
	                          "3",
	                          &recs));
	EXPECT_FALSE(SplitPayload("3\x1e"
	                          "3\x1e"
	                          "3",
	                          &recs, 2));

	std::string body;
	AppendRecord(&body, "2");
	AppendRecord(&body, "42[1]");
	EXPECT_EQ(body, "2\x1e"
	                "42[1]");
}

TEST(EngineIo, OpenPacketMatchesTheCapturedShape)
{
	EXPECT_EQ(OpenPacket("abc", true, 1500, 1000, 1000000),
	          "0{\"sid\":\"abc\",\"upgrades\":[\"websocket\"],\"pingInterval\":1500,\"pingTimeout\":1000,"
	          "\"maxPayload\":1000000}");
	EXPECT_EQ(OpenPacket("abc", false, 25000, 20000, 5),
	          "0{\"sid\":\"abc\",\"upgrades\":[],\"pingInterval\":25000,\"pingTimeout\":20000,\"maxPayload\":5}");
}

TEST(EngineIo, ValidatesUtf8Strictly)
{
	EXPECT_TRUE(ValidUtf8(""));
	EXPECT_TRUE(ValidUtf8("plain ascii"));
	EXPECT_TRUE(ValidUtf8("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
	EXPECT_TRUE(ValidUtf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF
	EXPECT_FALSE(ValidUtf8("\xc0\xaf"));         // overlong '/'
	EXPECT_FALSE(ValidUtf8("\xe0\x80\xaf"));     // overlong
	EXPECT_FALSE(ValidUtf8("\xed\xa0\x80"));     // surrogate
	EXPECT_FALSE(ValidUtf8("\xf4\x90\x80\x80")); // above U+10FFFF
	EXPECT_FALSE(ValidUtf8("\x80"));
	EXPECT_FALSE(ValidUtf8("\xc3")); // truncated
	EXPECT_FALSE(ValidUtf8("\xe2\x82"));
	EXPECT_FALSE(ValidUtf8("\xff"));
}

TEST(EngineIo, ErrorBodiesMatchTheReference)
{
	EXPECT_EQ(ErrorBody(HttpError::TransportUnknown), "{\"code\":0,\"message\":\"Transport unknown\"}");
	EXPECT_EQ(ErrorBody(HttpError::SessionUnknown), "{\"code\":1,\"message\":\"Session ID unknown\"}");
	EXPECT_EQ(ErrorBody(HttpError::BadHandshakeMethod), "{\"code\":2,\"message\":\"Bad handshake method\"}");
	EXPECT_EQ(ErrorBody(HttpError::BadRequest), "{\"code\":3,\"message\":\"Bad request\"}");
	EXPECT_EQ(ErrorBody(HttpError::UnsupportedProtocol), "{\"code\":5,\"message\":\"Unsupported protocol version\"}");
	// ours (HTTP 429): the reference's code 3, a message that says why
	EXPECT_EQ(ErrorBody(HttpError::TooManySessions), "{\"code\":3,\"message\":\"Too many unauthenticated sessions\"}");
}

TEST(EngineIo, ClassifiesRequests)
{
	auto kind = [](Request r) { return Classify(r); };
	EXPECT_EQ(kind({"GET", "4", "polling", "", false}).kind, RequestKind::Handshake);
	EXPECT_EQ(kind({"GET", "4", "polling", "s", false}).kind, RequestKind::Poll);
	EXPECT_EQ(kind({"POST", "4", "polling", "s", false}).kind, RequestKind::Send);
	EXPECT_EQ(kind({"GET", "4", "websocket", "", true}).kind, RequestKind::WebSocketNew);
	EXPECT_EQ(kind({"GET", "4", "websocket", "s", true}).kind, RequestKind::WebSocketUpgrade);
	EXPECT_EQ(kind({"OPTIONS", "", "", "", false}).kind, RequestKind::Preflight);
	EXPECT_EQ(kind({"GET", "4", "flash", "", false}).error, HttpError::TransportUnknown);
	EXPECT_EQ(kind({"GET", "3", "polling", "", false}).error, HttpError::UnsupportedProtocol);
	EXPECT_EQ(kind({"GET", "", "polling", "", false}).error, HttpError::UnsupportedProtocol);
	EXPECT_EQ(kind({"POST", "4", "polling", "", false}).error, HttpError::BadHandshakeMethod);
	EXPECT_EQ(kind({"GET", "4", "websocket", "", false}).error, HttpError::BadRequest);
	EXPECT_EQ(kind({"PUT", "4", "polling", "s", false}).error, HttpError::BadRequest);
	EXPECT_EQ(kind({"GET", "4", "polling", "", true}).error, HttpError::BadRequest);
}

TEST(EngineIo, RandomIdsAreUrlSafeAndDistinct)
{
	std::string a = RandomId(20), b = RandomId(20);
	EXPECT_EQ(a.size(), 20u);
	EXPECT_NE(a, b);
	EXPECT_EQ(a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
	          std::string::npos);
}

TEST(EngineIo, CorsOriginAllowedOnlyForListedOrigins)
{
	const std::vector<std::string> listed = {"https://app.example", "http://localhost:3000"};
	EXPECT_TRUE(CorsOriginAllowed("https://app.example", listed));
	EXPECT_TRUE(CorsOriginAllowed("http://localhost:3000", listed));
	EXPECT_FALSE(CorsOriginAllowed("https://app.example.evil", listed));
	EXPECT_FALSE(CorsOriginAllowed("http://app.example", listed));
	EXPECT_FALSE(CorsOriginAllowed("null", listed));
	EXPECT_FALSE(CorsOriginAllowed("https://app.example", {}));
	EXPECT_TRUE(CorsOriginAllowed("https://anything.example", {"*"}));
}

TEST(EngineIo, CorsOriginsSettingIsACommaSeparatedList)
{
	EXPECT_EQ(ParseCorsOrigins(""), std::vector<std::string>{});
	EXPECT_EQ(ParseCorsOrigins("*"), std::vector<std::string>{"*"});
	EXPECT_EQ(ParseCorsOrigins("https://a.example, http://localhost:3000"),
	          (std::vector<std::string>{"https://a.example", "http://localhost:3000"}));
	EXPECT_EQ(ParseCorsOrigins(" https://a.example ,,  , https://b.example,"),
	          (std::vector<std::string>{"https://a.example", "https://b.example"}));
}

TEST(EngineIo, CorsAllowHeadersEchoesOnlyHeaderNameLists)
{
	EXPECT_EQ(CorsAllowHeaders("content-type, x-app-token"), "content-type, x-app-token");
	EXPECT_EQ(CorsAllowHeaders("Authorization"), "Authorization");
	EXPECT_EQ(CorsAllowHeaders(""), "");
	EXPECT_EQ(CorsAllowHeaders(" , "), "");
	EXPECT_EQ(CorsAllowHeaders("x-a\r\nset-cookie: y"), "");
	EXPECT_EQ(CorsAllowHeaders(std::string("x-a\0b", 5)), "");
	EXPECT_EQ(CorsAllowHeaders("x(a)"), "");
	EXPECT_EQ(CorsAllowHeaders(std::string(1025, 'a')), "");
	EXPECT_EQ(CorsAllowHeaders(std::string(1024, 'a')), std::string(1024, 'a'));
}

TEST(EngineIo, UpgradeProbeSteps)
{
	EXPECT_EQ(OnProbeText(Transport::Probing, "2probe"), ProbeStep::Answer);
	EXPECT_EQ(OnProbeText(Transport::Upgrading, "5"), ProbeStep::Complete);
	// Each step only in its phase: a second "2probe", a "5" before the probe was answered, and
	// anything on a probe of a session that is not upgrading are faults.
	EXPECT_EQ(OnProbeText(Transport::Upgrading, "2probe"), ProbeStep::Fault);
	EXPECT_EQ(OnProbeText(Transport::Probing, "5"), ProbeStep::Fault);
	EXPECT_EQ(OnProbeText(Transport::Polling, "2probe"), ProbeStep::Fault);
	EXPECT_EQ(OnProbeText(Transport::WebSocket, "5"), ProbeStep::Fault);
	EXPECT_EQ(OnProbeText(Transport::Probing, "2"), ProbeStep::Fault);
	EXPECT_EQ(OnProbeText(Transport::Probing, "2probe "), ProbeStep::Fault);
	EXPECT_EQ(OnProbeText(Transport::Upgrading, "40"), ProbeStep::Fault);
}

TEST(EngineIo, DeclaredBodyTooLarge)
{
	EXPECT_FALSE(DeclaredBodyTooLarge("100000", 100000));
	EXPECT_TRUE(DeclaredBodyTooLarge("100001", 100000));
	EXPECT_TRUE(DeclaredBodyTooLarge("104857600", 100000));
	EXPECT_TRUE(DeclaredBodyTooLarge(" 104857600 ", 100000));
	EXPECT_FALSE(DeclaredBodyTooLarge("0", 100000));
	EXPECT_FALSE(DeclaredBodyTooLarge("", 100000));
	// far past 64 bits: saturates, still too large
	EXPECT_TRUE(DeclaredBodyTooLarge("99999999999999999999999999999", 100000));
	// not a number: the HTTP layer decides
	EXPECT_FALSE(DeclaredBodyTooLarge("-1", 100000));
	EXPECT_FALSE(DeclaredBodyTooLarge("12a", 100000));
}
