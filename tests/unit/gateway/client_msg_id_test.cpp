// tests/unit/gateway/client_msg_id_test.cpp - a send's client_msg_id before any SQL
// (daemon/src/gateway/send/core/client_msg_id.hpp) and in a /ws send frame
// (daemon/src/gateway/plain_ws/core/plain_ws_protocol.hpp).
#include <gtest/gtest.h>

#include "gateway/plain_ws/core/plain_ws_protocol.hpp"
#include "gateway/send/core/client_msg_id.hpp"

using chat_outboxd::ClientMsgIdError;
using chat_outboxd::kMaxClientMsgIdBytes;

TEST(ClientMsgId, OneTo64BytesWithoutControlCharacters)
{
	EXPECT_FALSE(ClientMsgIdError("k"));
	EXPECT_FALSE(ClientMsgIdError("0d6a8d0e-5f1c-4f7e-9d7a-3c2b1a0f9e8d"));
	EXPECT_FALSE(ClientMsgIdError(std::string(kMaxClientMsgIdBytes, 'x')));
	// bytes, not characters: 32 two-byte characters fit, 33 do not
	std::string e32;
	for (int i = 0; i < 32; i++)
		e32 += "\xc3\xa9";
	EXPECT_FALSE(ClientMsgIdError(e32));
	EXPECT_TRUE(ClientMsgIdError(e32 + "\xc3\xa9"));
	EXPECT_TRUE(ClientMsgIdError(""));
	EXPECT_TRUE(ClientMsgIdError(std::string(kMaxClientMsgIdBytes + 1, 'x')));
	EXPECT_TRUE(ClientMsgIdError(std::string("a\0b", 3)));
	EXPECT_TRUE(ClientMsgIdError("a\tb"));
	EXPECT_TRUE(ClientMsgIdError("a\x1f"));
	EXPECT_TRUE(ClientMsgIdError("a\x7f"));
	EXPECT_EQ(*ClientMsgIdError(""), "client_msg_id must be 1 to 64 bytes");
}

TEST(ClientMsgId, PlainWsSendFrame)
{
	using namespace chat_outboxd::plainws;
	ClientFrame f;
	std::string error;
	ASSERT_TRUE(DecodeClientFrame(R"({"type":"send","chat_id":1,"body":"b","client_msg_id":"k1"})", &f, &error));
	ASSERT_TRUE(f.client_msg_id);
	EXPECT_EQ(*f.client_msg_id, "k1");
	ASSERT_TRUE(DecodeClientFrame(R"({"type":"send","chat_id":1,"body":"b"})", &f, &error));
	EXPECT_FALSE(f.client_msg_id);
	ASSERT_TRUE(DecodeClientFrame(R"({"type":"send","chat_id":1,"body":"b","client_msg_id":null})", &f, &error));
	EXPECT_FALSE(f.client_msg_id);
	// the length rule is the send's (a refusal the client is answered with), the type the frame's
	ASSERT_TRUE(DecodeClientFrame(R"({"type":"send","chat_id":1,"body":"b","client_msg_id":""})", &f, &error));
	EXPECT_TRUE(f.client_msg_id && f.client_msg_id->empty());
	EXPECT_FALSE(DecodeClientFrame(R"({"type":"send","chat_id":1,"body":"b","client_msg_id":7})", &f, &error));
	EXPECT_EQ(error, "client_msg_id must be a string");
}
