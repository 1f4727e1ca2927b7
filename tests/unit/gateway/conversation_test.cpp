// tests/unit/gateway/conversation_test.cpp - the conversation events' rules
// (daemon/src/gateway/conversation/core/conversation.hpp, chat_keys.hpp).
#include <gtest/gtest.h>

#include "gateway/conversation/core/chat_keys.hpp"
#include "gateway/conversation/core/conversation.hpp"

using namespace chat_outboxd;
using nlohmann::json;

TEST(ChatKeys, Names)
{
	EXPECT_EQ(ChatEventsChannel({"bull"}, 42), "bull:chat_outbox:chat:42:events");
	EXPECT_EQ(ChatPresenceKey({"bull"}, -3), "bull:chat_outbox:chat:-3:presence");
	EXPECT_EQ(ChatPresenceUsersKey({"bull"}, 42), "bull:chat_outbox:chat:42:presence_users");
	EXPECT_EQ(ChatReadsKey({"bull"}, 42), "bull:chat_outbox:chat:42:reads");
	EXPECT_EQ(ChatShownKey({"bull"}, 42), "bull:chat_outbox:chat:42:shown");
	// on a Redis Cluster the chat id is the keys' hash tag (one slot for the presence script); the
	// channel keeps its one name
	EXPECT_EQ(ChatPresenceKey({"bull", true}, 42), "bull:chat_outbox:chat:{42}:presence");
	EXPECT_EQ(ChatPresenceIndexKey({"bull", true}, 42), "bull:chat_outbox:chat:{42}:presence_index");
	EXPECT_EQ(ChatReadsKey({"bull", true}, 42), "bull:chat_outbox:chat:{42}:reads");
	EXPECT_EQ(ChatEventsChannel({"bull", true}, 42), "bull:chat_outbox:chat:42:events");
}

TEST(Conversation, Identity)
{
	EXPECT_TRUE(conv::UsableSub("u-17"));
	EXPECT_FALSE(conv::UsableSub(""));
	EXPECT_FALSE(conv::UsableSub(std::string(201, 'x')));
	EXPECT_FALSE(conv::UsableSub("a\tb"));
	EXPECT_FALSE(conv::UsableSub("a\x1b[31mb")); // no control character: send_message would refuse it as a sender
	EXPECT_FALSE(conv::UsableSub("a\x7f"));
	EXPECT_TRUE(conv::UsableSub(std::string(200, 'x')));
	EXPECT_EQ(conv::CleanName("Wanda"), "Wanda");
	EXPECT_EQ(conv::CleanName(std::string(201, 'x')), "");
	EXPECT_EQ(conv::UserJson({"workers", "u", ""}), (json{{"service", "workers"}, {"sub", "u"}, {"name", nullptr}}));
}

TEST(Conversation, Requests)
{
	std::string err;
	conv::HistoryRequest h;
	EXPECT_TRUE(conv::ParseHistory(json{{"chat_id", 42}}, &h, &err));
	EXPECT_EQ(h.limit, 50);
	EXPECT_FALSE(h.before_seq);
	EXPECT_TRUE(conv::ParseHistory(json{{"chat_id", "42"}, {"before_seq", 9}, {"limit", 200}, {"before_sent", "2026-12-01T12:00:03.512345+00:00|0b6d1c2e-0000-4000-8000-00000000abcd"}},
	                               &h, &err));
	EXPECT_EQ(h.before_seq, 9);
	EXPECT_EQ(h.before_sent->id, "0b6d1c2e-0000-4000-8000-00000000abcd");
	EXPECT_EQ(conv::EncodeSentCursor(*h.before_sent), "2026-12-01T12:00:03.512345+00:00|0b6d1c2e-0000-4000-8000-00000000abcd");
	for (const json &bad : {json(42), json::object(), json{{"chat_id", 1.5}}, json{{"chat_id", 1}, {"limit", 0}},
	                        json{{"chat_id", 1}, {"limit", 201}}, json{{"chat_id", 1}, {"before_seq", -1}},
	                        json{{"chat_id", 1}, {"before_sent", "x|y"}}, json{{"chat_id", 1}, {"before_sent", "2026'; --|0b6d1c2e-0000-4000-8000-00000000abcd"}},
	                        json{{"chat_id", 1}, {"before_sent", 5}}}) {
		EXPECT_FALSE(conv::ParseHistory(bad, &h, &err)) << bad;
		EXPECT_FALSE(err.empty());
	}
	int64_t chat = 0, seq = 0;
	EXPECT_TRUE(conv::ParseRead(json{{"chat_id", 1}, {"seq", 5}}, &chat, &seq, &err));
	EXPECT_FALSE(conv::ParseRead(json{{"chat_id", 1}}, &chat, &seq, &err));
	EXPECT_FALSE(conv::ParseRead(json{{"chat_id", 1}, {"seq", -2}}, &chat, &seq, &err));
	bool typing = false;
	EXPECT_TRUE(conv::ParseTyping(json{{"chat_id", 1}}, &chat, &typing, &err));
	EXPECT_TRUE(typing);
	EXPECT_TRUE(conv::ParseTyping(json{{"chat_id", 1}, {"typing", false}}, &chat, &typing, &err));
	EXPECT_FALSE(typing);
	EXPECT_FALSE(conv::ParseTyping(json{{"chat_id", 1}, {"typing", "yes"}}, &chat, &typing, &err));
	EXPECT_EQ(conv::Error("forbidden", "no")["error"]["code"], "forbidden");
	EXPECT_EQ(conv::RateLimited(250)["error"]["retry_after_ms"], 250);
}

TEST(Conversation, PresenceCountsAUserOnce)
{
	conv::User w{"workers", "u1", "Wanda"}, c{"consumers", "u9", ""};
	std::vector<std::string> members = {conv::PresenceMember(w, "workers@a", 1), conv::PresenceMember(c, "consumers@b", 4),
	                                    conv::PresenceMember(w, "workers@b", 2), "garbage"};
	json users = conv::PresenceUsers(members);
	ASSERT_EQ(users.size(), 2u);
	EXPECT_EQ(users[0]["service"], "consumers");
	EXPECT_EQ(users[1], conv::UserJson(w));
}

TEST(Conversation, EnvelopesAndWhoForwardsThem)
{
	std::string text = conv::Envelope(conv::Event::Sent, "workers", json{{"chat_id", 1}});
	conv::BusEvent e;
	ASSERT_TRUE(conv::ParseEnvelope(text, &e));
	EXPECT_EQ(e.event, conv::Event::Sent);
	EXPECT_TRUE(conv::Forwarded(e, "workers"));
	EXPECT_FALSE(conv::Forwarded(e, "consumers"));
	e.event = conv::Event::Shown;
	EXPECT_FALSE(conv::Forwarded(e, "workers"));
	EXPECT_TRUE(conv::Forwarded(e, "consumers"));
	e.event = conv::Event::Typing;
	EXPECT_TRUE(conv::Forwarded(e, "workers"));
	EXPECT_FALSE(conv::ParseEnvelope("{\"event\":\"nope\",\"service\":\"x\",\"data\":{}}", &e));
	EXPECT_FALSE(conv::ParseEnvelope("[1]", &e));
	EXPECT_FALSE(conv::ParseEnvelope("{\"event\":\"typing\",\"service\":\"x\",\"data\":1}", &e));
}
