// tests/unit/gateway/conversation_counters_test.cpp - /metrics' conversation counters: labels from
// fixed lists only, results read from what the client got.
#include <gtest/gtest.h>

#include "gateway/conversation/core/conversation_counters.hpp"

using namespace chat_outboxd;

namespace {

std::string
Rendered(const conv::Counters &c)
{
	std::string s;
	c.Render(&s);
	return s;
}

bool
Has(const std::string &text, const std::string &line)
{
	return text.find("\n" + line + "\n") != std::string::npos;
}

} // namespace

TEST(ConversationCounters, CountsRequestsByResult)
{
	conv::Counters c;
	c.CountRequest("history", {{"ok", true}, {"messages", nlohmann::json::array()}});
	c.CountRequest("history", conv::Error("busy", "full"));
	c.CountRequest("history", conv::RateLimited(250));
	c.CountRequest("read", conv::Error("no_identity", "no sub"));
	std::string s = Rendered(c);
	EXPECT_TRUE(Has(s, R"(chat_outboxd_gateway_conversation_requests_total{request="history",result="ok"} 1)")) << s;
	EXPECT_TRUE(Has(s, R"(chat_outboxd_gateway_conversation_requests_total{request="history",result="busy"} 1)"));
	EXPECT_TRUE(Has(s, R"(chat_outboxd_gateway_conversation_requests_total{request="history",result="rate_limited"} 1)"));
	EXPECT_TRUE(Has(s, R"(chat_outboxd_gateway_conversation_requests_total{request="read",result="no_identity"} 1)"));
	// every pair is there from the start
	EXPECT_TRUE(Has(s, R"(chat_outboxd_gateway_conversation_requests_total{request="presence",result="unavailable"} 0)"));
}

TEST(ConversationCounters, NothingAClientSendsBecomesALabel)
{
	conv::Counters c;
	c.CountRequest("evil\"}", {{"ok", true}});                   // not a request: not counted
	c.CountRequest("typing", conv::Error("made_up\"code", "x")); // not a code: "other"
	c.CountRequest("typing", nlohmann::json("not an object"));   // not a result: "other"
	c.CountRequest("typing", {{"ok", false}});                   // no error object: "other"
	std::string s = Rendered(c);
	EXPECT_EQ(s.find("evil"), std::string::npos);
	EXPECT_EQ(s.find("made_up"), std::string::npos);
	EXPECT_TRUE(Has(s, R"(chat_outboxd_gateway_conversation_requests_total{request="typing",result="other"} 3)")) << s;
	size_t samples = 0;
	for (size_t at = s.find("\nchat_outboxd_gateway_conversation_requests_total{"); at != std::string::npos;
	     at = s.find("\nchat_outboxd_gateway_conversation_requests_total{", at + 1))
		samples++;
	EXPECT_EQ(samples, 4u * 8u); // four requests by ok, six codes and other
}

TEST(ConversationCounters, CountsEventsBothWays)
{
	conv::Counters c;
	c.CountPublished(conv::Event::Typing, true);
	c.CountPublished(conv::Event::Typing, true);
	c.CountPublished(conv::Event::Shown, false);
	c.CountReceived(conv::Event::Read);
	c.CountMalformed();
	std::string s = Rendered(c);
	EXPECT_TRUE(Has(s, R"(chat_outboxd_gateway_conversation_published_total{event="typing"} 2)")) << s;
	EXPECT_TRUE(Has(s, R"(chat_outboxd_gateway_conversation_publish_failed_total{event="shown"} 1)"));
	EXPECT_TRUE(Has(s, R"(chat_outboxd_gateway_conversation_received_total{event="read"} 1)"));
	EXPECT_TRUE(Has(s, R"(chat_outboxd_gateway_conversation_received_total{event="sent"} 0)"));
	EXPECT_TRUE(Has(s, "chat_outboxd_gateway_conversation_malformed_total 1"));
	// presence and read go out from inside their scripts: no published series that would stay 0
	EXPECT_EQ(s.find(R"(chat_outboxd_gateway_conversation_published_total{event="presence"})"), std::string::npos);
	EXPECT_EQ(s.find(R"(chat_outboxd_gateway_conversation_publish_failed_total{event="read"})"), std::string::npos);
}
