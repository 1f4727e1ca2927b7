// tests/unit/gateway/gateway_codecs_test.cpp - message encodings, the plain /ws protocol, seq gating, rooms.
#include <gtest/gtest.h>

#include <string>

#include "gateway/auth/core/gateway_auth.hpp"
#include "gateway/auth/core/jwt.hpp"
#include "gateway/client/core/message_json.hpp"
#include "gateway/plain_ws/core/plain_ws_protocol.hpp"
#include "gateway/hub/core/rooms.hpp"
#include "gateway/client/core/seq_gate.hpp"

using namespace chat_outboxd;

TEST(MessageJson, EncodesBothProtocolsWithTheOffset)
{
	InboxMessage m{17, "0b6d7e3a-0000-4000-8000-000000000001", 42, "hi \"there\"", "2024-01-02T03:04:05.6+00:00", std::nullopt, Change::None, "", "", ""};
	EXPECT_EQ(SocketIoMessageEvent(m),
	          "42[\"message\",{\"body\":\"hi \\\"there\\\"\",\"chat_id\":42,\"created_at\":\"2024-01-02T03:04:05.6+00:00\","
	          "\"id\":\"0b6d7e3a-0000-4000-8000-000000000001\",\"sender\":null,\"seq\":17},\"17\"]");
	m.created_at.clear();
	m.sender = "alice";
	EXPECT_EQ(PlainMessageFrame(m), "{\"message\":{\"body\":\"hi \\\"there\\\"\",\"chat_id\":42,\"created_at\":null,"
	                                "\"id\":\"0b6d7e3a-0000-4000-8000-000000000001\",\"sender\":\"alice\",\"seq\":17},"
	                                "\"type\":\"message\"}");
	m.body = "bad \xff utf8";
	EXPECT_NO_THROW(PlainMessageFrame(m));
}

TEST(MessageJson, EditsAndDeletesAreTheirOwnEvents)
{
	InboxMessage e{18, "0b6d7e3a-0000-4000-8000-0000000000e1", 42, "new", "", std::string("alice"), Change::None, "", "", ""};
	e.change = Change::Edited;
	e.target = "0b6d7e3a-0000-4000-8000-000000000001";
	e.edited_at = "2024-01-02T03:04:06+00:00";
	// the id is the changed message's; the seq is the event's own, the Socket.IO offset too
	EXPECT_EQ(SocketIoMessageEvent(e), "42[\"message_edited\",{\"body\":\"new\",\"chat_id\":42,\"edited_at\":"
	                                   "\"2024-01-02T03:04:06+00:00\",\"id\":\"0b6d7e3a-0000-4000-8000-000000000001\","
	                                   "\"sender\":\"alice\",\"seq\":18},\"18\"]");
	InboxMessage d = e;
	d.change = Change::Deleted;
	d.seq = 19;
	d.body.clear();
	d.edited_at.clear();
	d.deleted_at = "2024-01-02T03:04:07+00:00";
	EXPECT_EQ(PlainMessageFrame(d), "{\"message\":{\"chat_id\":42,\"deleted_at\":\"2024-01-02T03:04:07+00:00\","
	                                "\"id\":\"0b6d7e3a-0000-4000-8000-000000000001\",\"seq\":19},"
	                                "\"type\":\"message_deleted\"}");
	// an edit of a message deleted since: the inbox has no body for it any more, it shows as the delete
	e.deleted_at = d.deleted_at;
	e.body.clear();
	EXPECT_STREQ(EventName(e), "message_deleted");
	EXPECT_FALSE(EventObject(e).contains("body"));
	// a message in its changed state: edited_at, or deleted_at and a null body
	InboxMessage m{17, "0b6d7e3a-0000-4000-8000-000000000001", 42, "new", "", std::nullopt, Change::None, "", "", ""};
	m.edited_at = "2024-01-02T03:04:06+00:00";
	EXPECT_EQ(MessageObject(m)["edited_at"], "2024-01-02T03:04:06+00:00");
	m.deleted_at = "2024-01-02T03:04:07+00:00";
	m.body.clear();
	EXPECT_TRUE(MessageObject(m)["body"].is_null());
	EXPECT_FALSE(MessageObject(m).contains("edited_at"));
}

TEST(MessageJson, ReadsIntegersFromNumbersAndDigitStrings)
{
	int64_t v = 0;
	EXPECT_TRUE(JsonInteger(5, &v));
	EXPECT_EQ(v, 5);
	EXPECT_TRUE(JsonInteger("123", &v));
	EXPECT_EQ(v, 123);
	EXPECT_FALSE(JsonInteger("12a", &v));
	EXPECT_FALSE(JsonInteger("", &v));
	EXPECT_FALSE(JsonInteger("99999999999999999999", &v));
	EXPECT_FALSE(JsonInteger(1.5, &v));
	EXPECT_FALSE(JsonInteger(nullptr, &v));
}

TEST(PlainWs, DecodesClientFrames)
{
	plainws::ClientFrame f;
	std::string err;
	ASSERT_TRUE(plainws::DecodeClientFrame(R"({"type":"send","ref":"a1","chat_id":42,"body":"hello"})", &f, &err));
	EXPECT_EQ(f.type, plainws::FrameType::Send);
	EXPECT_EQ(f.ref, "a1");
	EXPECT_EQ(f.chat_id, 42);
	EXPECT_EQ(f.body, "hello");
	ASSERT_TRUE(plainws::DecodeClientFrame(R"({"type":"join","ref":3,"chat_id":"7"})", &f, &err));
	EXPECT_EQ(f.type, plainws::FrameType::Join);
	EXPECT_EQ(f.chat_id, 7);
	ASSERT_TRUE(plainws::DecodeClientFrame(R"({"type":"ping"})", &f, &err));
	EXPECT_TRUE(f.ref.is_null());

	// The conversation's frames pass with the whole frame as their argument, even a bad one: the
	// conversation's rules answer it with an error frame instead of closing the connection.
	ASSERT_TRUE(plainws::DecodeClientFrame(R"({"type":"history","ref":9,"chat_id":"x"})", &f, &err));
	EXPECT_EQ(f.type, plainws::FrameType::Conversation);
	EXPECT_EQ(f.name, "history");
	EXPECT_EQ(f.arg["chat_id"], "x");
	EXPECT_EQ(f.ref, 9);
	EXPECT_FALSE(plainws::DecodeClientFrame(R"({"type":"read","ref":{}})", &f, &err));
	EXPECT_FALSE(plainws::DecodeClientFrame("not json", &f, &err));
	EXPECT_FALSE(plainws::DecodeClientFrame("[1]", &f, &err));
	EXPECT_FALSE(plainws::DecodeClientFrame(R"({"type":"nuke"})", &f, &err));
	EXPECT_FALSE(plainws::DecodeClientFrame(R"({"type":"send","chat_id":1})", &f, &err));
	EXPECT_FALSE(plainws::DecodeClientFrame(R"({"type":"join","chat_id":[1]})", &f, &err));
	EXPECT_FALSE(plainws::DecodeClientFrame(R"({"type":"ping","ref":{}})", &f, &err));

	ASSERT_TRUE(plainws::DecodeClientFrame(R"({"type":"edit","ref":1,"message_id":"m","body":"b"})", &f, &err));
	EXPECT_EQ(f.type, plainws::FrameType::Edit);
	EXPECT_EQ(f.message_id, "m"); // a uuid or not: the gateway answers a bad one with an error frame
	EXPECT_EQ(f.body, "b");
	ASSERT_TRUE(plainws::DecodeClientFrame(R"({"type":"delete","message_id":"m"})", &f, &err));
	EXPECT_EQ(f.type, plainws::FrameType::Delete);
	EXPECT_FALSE(plainws::DecodeClientFrame(R"({"type":"edit","message_id":"m"})", &f, &err));
	EXPECT_FALSE(plainws::DecodeClientFrame(R"({"type":"delete","message_id":7})", &f, &err));
}

TEST(PlainWs, EncodesAcksAndErrors)
{
	EXPECT_EQ(plainws::AckFrame("r", {{"ok", true}}), R"({"ok":true,"ref":"r","type":"ack"})");
	EXPECT_EQ(plainws::ErrorFrame(1, {{"message", "forbidden"}}),
	          R"({"error":{"message":"forbidden"},"ref":1,"type":"error"})");
}

TEST(SeqGate, DropsDuplicatesAndHoldsLiveDuringReplay)
{
	SeqGate<int> gate(10);
	EXPECT_FALSE(gate.Live(9, 9));
	EXPECT_FALSE(gate.Live(10, 10));
	EXPECT_TRUE(gate.Live(11, 11));
	gate.BeginReplay();
	EXPECT_FALSE(gate.Live(14, 14)); // held
	EXPECT_FALSE(gate.Live(15, 15)); // held
	// the replay query returns 12..14: 14 is both replayed and live
	EXPECT_TRUE(gate.Take(12));
	EXPECT_TRUE(gate.Take(13));
	EXPECT_TRUE(gate.Take(14));
	EXPECT_EQ(gate.Finish(), std::vector<int>{15});
	EXPECT_FALSE(gate.Replaying());
	EXPECT_EQ(gate.Highest(), 15);
	EXPECT_TRUE(gate.Live(16, 16));
}

TEST(SeqGate, AbandonDropsWhatWasHeld)
{
	SeqGate<int> gate(10);
	gate.BeginReplay();
	EXPECT_FALSE(gate.Live(12, 12));
	gate.Abandon();
	EXPECT_FALSE(gate.Replaying());
	EXPECT_EQ(gate.Finish(), std::vector<int>{});
	EXPECT_EQ(gate.Highest(), 10); // nothing held was marked sent
	EXPECT_TRUE(gate.Live(12, 12));
}

TEST(SeqGate, DropHeldKeepsTheReplayGoing)
{
	SeqGate<int> gate(10);
	gate.BeginReplay();
	EXPECT_FALSE(gate.Live(12, 12));
	gate.DropHeld(); // 12 is read again by the replay
	EXPECT_TRUE(gate.Replaying());
	EXPECT_FALSE(gate.Live(13, 13));
	EXPECT_TRUE(gate.Take(11));
	EXPECT_TRUE(gate.Take(12));
	EXPECT_EQ(gate.Finish(), std::vector<int>{13});
}

TEST(Rooms, JoinsLeavesAndForgetsEmptyRooms)
{
	Rooms<int> rooms;
	int a = 1, b = 2;
	rooms.Join(42, &a);
	rooms.Join(42, &b);
	rooms.Join(42, &b);
	ASSERT_NE(rooms.Members(42), nullptr);
	EXPECT_EQ(rooms.Members(42)->size(), 2u);
	rooms.Leave(42, &a);
	rooms.Leave(42, &b);
	EXPECT_EQ(rooms.Members(42), nullptr);
	EXPECT_EQ(rooms.RoomCount(), 0u);
	rooms.Leave(7, &a);
}

TEST(GatewayAuth, JoinsTheTokenChatsOrExactlyTheRequestedOnes)
{
	const int64_t now = 1700000000;
	std::string token = jwt::Sign(R"({"chats":[1,2,3],"exp":1700000100})", "k");
	AuthResult r = Authorize(token, {"k"}, now, std::nullopt);
	ASSERT_TRUE(r.ok);
	EXPECT_EQ(r.rooms, (std::vector<int64_t>{1, 2, 3}));
	r = Authorize(token, {"k"}, now, std::vector<int64_t>{3, 1, 3});
	ASSERT_TRUE(r.ok);
	EXPECT_EQ(r.rooms, (std::vector<int64_t>{1, 3}));
	EXPECT_EQ(r.allowed, (std::vector<int64_t>{1, 2, 3}));
	r = Authorize(token, {"k"}, now, std::vector<int64_t>{1, 9});
	EXPECT_FALSE(r.ok);
	EXPECT_EQ(r.message, "forbidden");
	r = Authorize(token, {"other"}, now, std::nullopt);
	EXPECT_EQ(r.message, "unauthorized");
	EXPECT_EQ(r.reason, "bad signature");
	r = Authorize("", {"k"}, now, std::nullopt);
	EXPECT_EQ(r.reason, "missing token");
}

TEST(GatewayAuth, ParsesChatListsAndBearerHeaders)
{
	std::vector<int64_t> v;
	EXPECT_TRUE(ParseChatList("1,22,333", &v));
	EXPECT_EQ(v, (std::vector<int64_t>{1, 22, 333}));
	EXPECT_FALSE(ParseChatList("1,,2", &v));
	EXPECT_FALSE(ParseChatList("1,x", &v));
	EXPECT_TRUE(ChatListFromJson(nlohmann::json::parse("[4,\"5\"]"), &v));
	EXPECT_EQ(v, (std::vector<int64_t>{4, 5}));
	EXPECT_FALSE(ChatListFromJson(nlohmann::json::parse("[true]"), &v));
	EXPECT_FALSE(ChatListFromJson(nlohmann::json::parse("{}"), &v));
	EXPECT_EQ(BearerToken("Bearer abc.def.ghi"), "abc.def.ghi");
	EXPECT_EQ(BearerToken("bearer   x "), "x");
	EXPECT_EQ(BearerToken("Basic abc"), "");
	EXPECT_EQ(BearerToken("Bearer "), "");
}
