// tests/unit/inbox/inbox_row_test.cpp - an inbox row read into an InboxMessage.
#include "inbox/core/inbox_row.hpp"

#include <gtest/gtest.h>

using namespace chat_outboxd;

TEST(InboxRow, ReadsTheColumnsInTheirOrder)
{
	EXPECT_EQ(InboxRowColumns(true).rfind("seq, message_id, chat_id, body, ", 0), 0u);
	// against chat_outbox 1.0's inbox the sender column reads NULL, so the columns stay where they are
	EXPECT_NE(InboxRowColumns(true).find(", sender"), std::string::npos);
	EXPECT_NE(InboxRowColumns(false).find(", NULL::pg_catalog.text AS sender"), std::string::npos);
	PgRow row = {std::string("12"), std::string("id-1"), std::string("-5"), std::string("hi"), std::nullopt,
	             std::nullopt, std::string("extra")};
	InboxMessage m;
	ASSERT_TRUE(ReadInboxRow(row, &m));
	EXPECT_EQ(m.seq, 12);
	EXPECT_EQ(m.id, "id-1");
	EXPECT_EQ(m.chat_id, -5);
	EXPECT_EQ(m.body, "hi");
	EXPECT_EQ(m.created_at, ""); // NULL created_at
	EXPECT_FALSE(m.sender);      // NULL sender: none, not ""
	row = {std::string("13"), std::string("id-2"), std::string("7"), std::string(""),
	       std::string("2026-01-01T00:00:00+00:00"), std::string("alice")};
	ASSERT_TRUE(ReadInboxRow(row, &m));
	EXPECT_EQ(m.created_at, "2026-01-01T00:00:00+00:00");
	EXPECT_EQ(m.sender, std::optional<std::string>("alice"));
}

TEST(InboxRow, RefusesAShortOrUnreadableRow)
{
	InboxMessage m;
	PgRow shorter = {std::string("1"), std::string("id"), std::string("7"), std::string("b"), std::nullopt};
	EXPECT_FALSE(ReadInboxRow(shorter, &m));
	PgRow null_body = {std::string("1"), std::string("id"), std::string("7"), std::nullopt, std::nullopt, std::nullopt};
	EXPECT_FALSE(ReadInboxRow(null_body, &m));
	PgRow bad_seq = {std::string("1x"), std::string("id"), std::string("7"), std::string("b"), std::nullopt, std::nullopt};
	EXPECT_FALSE(ReadInboxRow(bad_seq, &m));
	PgRow big_chat = {std::string("1"), std::string("id"), std::string("99999999999999999999"), std::string("b"),
	                  std::nullopt, std::nullopt};
	EXPECT_FALSE(ReadInboxRow(big_chat, &m));
}
