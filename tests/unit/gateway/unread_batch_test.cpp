// tests/unit/gateway/unread_batch_test.cpp - the users of one chat_state read
// (gateway/conversation/core/unread_batch.hpp): a user asked twice is asked once, the user without a sub is
// one NULL, answers are found by user, and the text[] literal quotes what Postgres would misread.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "gateway/conversation/core/unread_batch.hpp"

using namespace chat_outboxd::conv;

TEST(UnreadBatch, EachUserOnceAndTheNullUser)
{
	UnreadBatch b;
	EXPECT_EQ(b.Add(std::string("mia")), 0u);
	EXPECT_EQ(b.Add(std::nullopt), 1u);
	EXPECT_EQ(b.Add(std::string("max")), 2u);
	EXPECT_EQ(b.Add(std::string("mia")), 0u); // a second tab
	EXPECT_EQ(b.Add(std::nullopt), 1u);
	EXPECT_EQ(b.Users().size(), 3u);
	EXPECT_EQ(b.Find(std::string("max")), 2u);
	EXPECT_EQ(b.Find(std::nullopt), 1u);
	EXPECT_EQ(b.Find(std::string("sam")), UnreadBatch::npos);
	EXPECT_EQ(b.ArrayLiteral(), "{\"mia\",NULL,\"max\"}");
	UnreadBatch none;
	EXPECT_EQ(none.Find(std::nullopt), UnreadBatch::npos);
	EXPECT_EQ(none.ArrayLiteral(), "{}");
}

TEST(UnreadBatch, HostileSubsAreQuoted)
{
	UnreadBatch b;
	b.Add(std::string("a\"b"));
	b.Add(std::string("c\\d"));
	b.Add(std::string("NULL"));
	b.Add(std::string("{x,y}"));
	b.Add(std::string(" sp "));
	EXPECT_EQ(b.ArrayLiteral(), "{\"a\\\"b\",\"c\\\\d\",\"NULL\",\"{x,y}\",\" sp \"}");
	EXPECT_EQ(UnreadUserBytes(std::string("a\"b")), 7u); // "a\"b" and a comma
	EXPECT_EQ(UnreadUserBytes(std::nullopt), 5u);
}
