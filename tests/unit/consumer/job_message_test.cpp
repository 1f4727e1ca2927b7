// tests/unit/consumer/job_message_test.cpp - which job data is a chat message, and the poison reasons.
#include <gtest/gtest.h>

#include "consumer/core/job_message.hpp"

using namespace chat_outboxd;

namespace {

std::string
Reason(const std::string &data)
{
	std::string reason;
	EXPECT_FALSE(ParseMessage(data, &reason)) << data;
	return reason;
}

const char kId[] = "0b6f6c1e-4a8f-4c63-9d35-2f7e1c8b9a10";

} // namespace

TEST(BullmqMessage, Accepts)
{
	std::string reason;
	auto m = ParseMessage(std::string(R"({"id":")") + kId + R"(","chat_id":42,"body":"hi","extra":1})", &reason);
	ASSERT_TRUE(m) << reason;
	EXPECT_EQ(m->id, kId);
	EXPECT_EQ(m->chat_id, 42);
	EXPECT_EQ(m->body, "hi");
	EXPECT_FALSE(m->created_at);
	m = ParseMessage(std::string(R"({"id":")") + kId +
	                     R"(","chat_id":"-9223372036854775808","body":"","created_at":"2026-11-30T00:01:02.345678+00:00"})",
	                 &reason);
	ASSERT_TRUE(m) << reason;
	EXPECT_EQ(m->chat_id, INT64_MIN);
	EXPECT_EQ(*m->created_at, "2026-11-30T00:01:02.345678+00:00");
	EXPECT_FALSE(m->sender);
}

TEST(BullmqMessage, Sender)
{
	std::string reason, id = std::string("\"id\":\"") + kId + "\"";
	auto m = ParseMessage("{" + id + R"(,"chat_id":1,"body":"x","sender":"alice"})", &reason);
	ASSERT_TRUE(m) << reason;
	EXPECT_EQ(*m->sender, "alice");
	m = ParseMessage("{" + id + R"(,"chat_id":1,"body":"x","sender":null})", &reason);
	ASSERT_TRUE(m) << reason;
	EXPECT_FALSE(m->sender);
	m = ParseMessage("{" + id + R"(,"chat_id":1,"body":"x","sender":")" + std::string(200, 's') + "\"}", &reason);
	ASSERT_TRUE(m) << reason;
	// what send_message refuses is poison here too (inbox/core/user_id.hpp)
	const std::string bad = "invalid message: sender is not 1 to 200 bytes without control characters";
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":1,"body":"x","sender":""})"), bad);
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":1,"body":"x","sender":")" + std::string(201, 's') + "\"}"), bad);
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":1,"body":"x","sender":"a\u0000b"})"), bad);
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":1,"body":"x","sender":"a\u001bb"})"), bad);
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":1,"body":"x","sender":7})"), "invalid message: sender is not a string");
}

TEST(BullmqMessage, UuidIsLowerCased)
{
	std::string reason;
	auto m = ParseMessage(R"({"id":"0B6F6C1E-4A8F-4C63-9D35-2F7E1C8B9A10","chat_id":1,"body":"x"})", &reason);
	ASSERT_TRUE(m);
	EXPECT_EQ(m->id, kId);
}

TEST(BullmqMessage, PoisonReasons)
{
	std::string id = std::string("\"id\":\"") + kId + "\"";
	EXPECT_EQ(Reason("not json"), "invalid message: data is not valid JSON");
	EXPECT_EQ(Reason("[1]"), "invalid message: data is not a JSON object");
	EXPECT_EQ(Reason(R"({"chat_id":1,"body":"x"})"), "invalid message: id missing");
	EXPECT_EQ(Reason(R"({"id":42,"chat_id":1,"body":"x"})"), "invalid message: id is not a uuid string");
	EXPECT_EQ(Reason("{" + id + R"(,"body":"x"})"), "invalid message: chat_id missing");
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":1.5,"body":"x"})"), "invalid message: chat_id is not an integer");
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":"12a","body":"x"})"), "invalid message: chat_id is not an integer");
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":"99999999999999999999","body":"x"})"),
	          "invalid message: chat_id is not an integer");
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":18446744073709551615,"body":"x"})"), "invalid message: chat_id out of range");
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":1})"), "invalid message: body missing");
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":1,"body":5})"), "invalid message: body is not a string");
	EXPECT_EQ(Reason("{" + id + R"(,"chat_id":1,"body":"a\u0000b"})"), "invalid message: body contains a NUL character");
}

TEST(BullmqMessage, MalformedTimestampIsDropped)
{
	std::string reason;
	auto m = ParseMessage(std::string(R"({"id":")") + kId + R"(","chat_id":1,"body":"x","created_at":"2026-13-01"})",
	                      &reason);
	ASSERT_TRUE(m);
	EXPECT_FALSE(m->created_at);
}

TEST(BullmqMessage, EditsAndDeletes)
{
	// message.edited and message.deleted name the changed message; the event's own id is the job's
	const std::string target = "AAAAAAAA-0000-4000-8000-000000000001";
	std::string reason;
	auto e = ParseMessage(kEditedJob,
	                      std::string(R"({"id":")") + kId + R"(","message_id":")" + target +
	                          R"(","chat_id":7,"body":"new","sender":"alice","version":2,"edited_at":"2026-12-01T10:00:00Z"})",
	                      &reason);
	ASSERT_TRUE(e) << reason;
	EXPECT_EQ(e->change, Change::Edited);
	EXPECT_EQ(e->target, "aaaaaaaa-0000-4000-8000-000000000001"); // lower-cased, as Postgres prints it
	EXPECT_EQ(e->version, 2);
	EXPECT_EQ(e->body, "new");
	EXPECT_EQ(e->changed_at, std::optional<std::string>("2026-12-01T10:00:00Z"));
	// a delete's body is stored empty, whatever the payload holds
	auto d = ParseMessage(kDeletedJob,
	                      std::string(R"({"id":")") + kId + R"(","message_id":")" + target +
	                          R"(","chat_id":7,"body":"left behind","version":3,"deleted_at":"2026-12-01T11:00:00Z"})",
	                      &reason);
	ASSERT_TRUE(d) << reason;
	EXPECT_EQ(d->change, Change::Deleted);
	EXPECT_EQ(d->body, "");
	// any other name is a message
	auto m = ParseMessage("message.created", std::string(R"({"id":")") + kId + R"(","chat_id":7,"body":"x"})", &reason);
	ASSERT_TRUE(m);
	EXPECT_EQ(m->change, Change::None);
	// hostile ids and versions are poison
	const std::string head = std::string(R"({"id":")") + kId + R"(","chat_id":7,"body":"x")";
	EXPECT_FALSE(ParseMessage(kEditedJob, head + R"(,"version":1})", &reason));
	EXPECT_EQ(reason, "invalid message: message_id is not a uuid string");
	EXPECT_FALSE(ParseMessage(kEditedJob, head + R"(,"message_id":"x:1","version":1})", &reason));
	EXPECT_EQ(reason, "invalid message: message_id is not a uuid string");
	EXPECT_FALSE(ParseMessage(kDeletedJob, head + R"(,"message_id":")" + target + R"("})", &reason));
	EXPECT_EQ(reason, "invalid message: version is not an integer from 1 to 2147483647");
	EXPECT_FALSE(ParseMessage(kDeletedJob, head + R"(,"message_id":")" + target + R"(","version":0})", &reason));
	EXPECT_FALSE(ParseMessage(kEditedJob, head + R"(,"message_id":")" + target + R"(","version":4294967296})", &reason));
	EXPECT_FALSE(ParseMessage(kEditedJob, std::string(R"({"id":")") + kId + R"(","message_id":")" + target + R"(","chat_id":7,"version":1})",
	                          &reason));
	EXPECT_EQ(reason, "invalid message: body missing");
}
