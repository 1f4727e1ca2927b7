// tests/unit/gateway/socketio_test.cpp - the Socket.IO codec against the captured wire examples.
#include <gtest/gtest.h>

#include "gateway/engineio/core/socketio.hpp"

using namespace chat_outboxd::sio;

namespace {
Packet
Must(std::string_view text)
{
	Packet p;
	std::string err;
	EXPECT_TRUE(DecodeClientPacket(text, &p, &err)) << text << ": " << err;
	return p;
}
std::string
Refusal(std::string_view text)
{
	Packet p;
	std::string err;
	EXPECT_FALSE(DecodeClientPacket(text, &p, &err)) << text;
	return err;
}
} // namespace

TEST(SocketIo, DecodesConnect)
{
	Packet p = Must("0{\"token\":\"abc\"}");
	EXPECT_EQ(p.type, PacketType::Connect);
	EXPECT_EQ(p.nsp, "/");
	EXPECT_EQ(p.data["token"], "abc");
	p = Must("0");
	EXPECT_TRUE(p.data.is_null());
	p = Must("0/admin,{\"token\":\"x\"}");
	EXPECT_EQ(p.nsp, "/admin");
	p = Must("0/nope,");
	EXPECT_EQ(p.nsp, "/nope");
	EXPECT_TRUE(p.data.is_null());
	p = Must("1/admin");
	EXPECT_EQ(p.type, PacketType::Disconnect);
	EXPECT_EQ(p.nsp, "/admin");
}

TEST(SocketIo, DecodesEventsWithAndWithoutAckIds)
{
	Packet p = Must("20[\"hello\",{\"a\":1}]");
	EXPECT_EQ(p.type, PacketType::Event);
	ASSERT_TRUE(p.ack_id.has_value());
	EXPECT_EQ(*p.ack_id, 0u);
	EXPECT_EQ(p.data[0], "hello");
	p = Must("2[\"plain\",\"x\",2,[true,null]]");
	EXPECT_FALSE(p.ack_id.has_value());
	p = Must("2/admin,17[\"send\",{}]");
	EXPECT_EQ(p.nsp, "/admin");
	EXPECT_EQ(*p.ack_id, 17u);
	p = Must("30[\"answer!\"]");
	EXPECT_EQ(p.type, PacketType::Ack);
}

TEST(SocketIo, RefusesWhatAClientMustNotSend)
{
	EXPECT_EQ(Refusal(""), "empty packet");
	EXPECT_EQ(Refusal("9"), "unknown packet type");
	EXPECT_EQ(Refusal("51-[\"bin\",{\"_placeholder\":true,\"num\":0}]"), "binary packets are not supported");
	EXPECT_EQ(Refusal("4{\"message\":\"x\"}"), "CONNECT_ERROR from a client");
	EXPECT_EQ(Refusal("2[\"connect\"]"), "reserved event name");
	EXPECT_EQ(Refusal("2[\"disconnecting\",1]"), "reserved event name");
	EXPECT_EQ(Refusal("2{\"a\":1}"), "EVENT payload is not [name, ...]");
	EXPECT_EQ(Refusal("2[]"), "EVENT payload is not [name, ...]");
	EXPECT_EQ(Refusal("2[1]"), "EVENT payload is not [name, ...]");
	EXPECT_EQ(Refusal("2[\"a\""), "invalid JSON");
	EXPECT_EQ(Refusal("2[\"a\"]garbage"), "invalid JSON");
	EXPECT_EQ(Refusal("0[1]"), "CONNECT payload is not an object");
	EXPECT_EQ(Refusal("3[1]"), "ACK without id or array");
	EXPECT_EQ(Refusal("21234567890123456[\"a\"]"), "ack id too long");
	EXPECT_EQ(Refusal("2[\"a\xff\"]"), "invalid JSON");
}

TEST(SocketIo, EncodesServerPackets)
{
	EXPECT_EQ(EncodeConnectOk("/", "jNMx", ""), "0{\"sid\":\"jNMx\"}");
	EXPECT_EQ(EncodeConnectOk("/", "s", "p"), "0{\"pid\":\"p\",\"sid\":\"s\"}");
	EXPECT_EQ(EncodeConnectError("/nope", "Invalid namespace", nullptr), "4/nope,{\"message\":\"Invalid namespace\"}");
	EXPECT_EQ(EncodeConnectError("/", "unauthorized", {{"reason", "token expired"}}),
	          "4{\"data\":{\"reason\":\"token expired\"},\"message\":\"unauthorized\"}");
	EXPECT_EQ(EncodeAck("/", 0, nlohmann::json::array({{{"ok", true}}})), "30[{\"ok\":true}]");
	EXPECT_EQ(EncodeEvent("/", nlohmann::json::array({"message", 1})), "2[\"message\",1]");
}
