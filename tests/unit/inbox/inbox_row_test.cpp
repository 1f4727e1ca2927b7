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
	             std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::string("extra")};
	InboxMessage m;
	ASSERT_TRUE(ReadInboxRow(row, &m));
	EXPECT_EQ(m.seq, 12);
	EXPECT_EQ(m.id, "id-1");
	EXPECT_EQ(m.chat_id, -5);
	EXPECT_EQ(m.body, "hi");
	EXPECT_EQ(m.created_at, ""); // NULL created_at
	EXPECT_FALSE(m.sender);      // NULL sender: none, not ""
	EXPECT_EQ(m.change, Change::None);
	EXPECT_EQ(m.edited_at, "");
	EXPECT_EQ(m.deleted_at, "");
	row = {std::string("13"), std::string("id-2"), std::string("7"), std::string(""),
	       std::string("2026-01-01T00:00:00+00:00"), std::string("alice"), std::nullopt, std::nullopt,
	       std::string("2026-01-02T00:00:00+00:00"), std::nullopt};
	ASSERT_TRUE(ReadInboxRow(row, &m));
	EXPECT_EQ(m.created_at, "2026-01-01T00:00:00+00:00");
	EXPECT_EQ(m.sender, std::optional<std::string>("alice"));
	EXPECT_EQ(m.edited_at, "2026-01-02T00:00:00+00:00"); // a message in its edited state
}

TEST(InboxRow, ReadsAnEditOrDeleteRow)
{
	// the edit columns follow the sender, 1.0 tables read them as NULLs
	EXPECT_NE(InboxRowColumns(true).find(", target::pg_catalog.text, kind, "), std::string::npos);
	EXPECT_NE(InboxRowColumns(false).find("NULL::pg_catalog.text AS target"), std::string::npos);
	PgRow row = {std::string("14"), std::string("event-1"), std::string("7"), std::string("new text"), std::nullopt,
	             std::string("alice"), std::string("message-1"), std::string("edited"),
	             std::string("2026-01-02T00:00:00+00:00"), std::nullopt};
	InboxMessage m;
	ASSERT_TRUE(ReadInboxRow(row, &m));
	EXPECT_EQ(m.change, Change::Edited);
	EXPECT_EQ(m.id, "event-1");
	EXPECT_EQ(m.target, "message-1");
	row = {std::string("15"), std::string("event-2"), std::string("7"), std::string(""), std::nullopt, std::nullopt,
	       std::string("message-1"), std::string("deleted"), std::nullopt, std::string("2026-01-03T00:00:00+00:00")};
	ASSERT_TRUE(ReadInboxRow(row, &m));
	EXPECT_EQ(m.change, Change::Deleted);
	EXPECT_EQ(m.deleted_at, "2026-01-03T00:00:00+00:00");
	PgRow unknown_kind = row;
	unknown_kind[7] = std::string("renamed");
	EXPECT_FALSE(ReadInboxRow(unknown_kind, &m));
	PgRow no_target = row;
	no_target[6] = std::nullopt;
	EXPECT_FALSE(ReadInboxRow(no_target, &m));
}

TEST(InboxRow, RefusesAShortOrUnreadableRow)
{
	InboxMessage m;
	PgRow shorter = {std::string("1"), std::string("id"), std::string("7"), std::string("b"), std::nullopt, std::nullopt};
	EXPECT_FALSE(ReadInboxRow(shorter, &m));
	PgRow null_body = {std::string("1"), std::string("id"), std::string("7"), std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
	EXPECT_FALSE(ReadInboxRow(null_body, &m));
	PgRow bad_seq = {std::string("1x"), std::string("id"), std::string("7"), std::string("b"), std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
	EXPECT_FALSE(ReadInboxRow(bad_seq, &m));
	PgRow big_chat = {std::string("1"), std::string("id"), std::string("99999999999999999999"), std::string("b"),
	                  std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
	EXPECT_FALSE(ReadInboxRow(big_chat, &m));
}
