// tests/unit/consumer/inbox_sql_test.cpp - the inbox batch statement and its array parameters.
#include <gtest/gtest.h>

#include "consumer/core/inbox_sql.hpp"

using namespace chat_outboxd;

TEST(InboxSql, ArrayLiteralQuotesEverything)
{
	EXPECT_EQ(PgArrayLiteral({}), "{}");
	EXPECT_EQ(PgArrayLiteral({std::string("a"), std::nullopt, std::string("NULL")}), R"({"a",NULL,"NULL"})");
	EXPECT_EQ(PgArrayLiteral({std::string(R"(say "hi", {x} \ y)")}), R"({"say \"hi\", {x} \\ y"})");
	EXPECT_EQ(PgArrayLiteral({std::string("")}), R"({""})");
}

TEST(InboxSql, ParamsInQueueOrder)
{
	ChatMessage a{"11111111-1111-4111-8111-111111111111", 1, "one", std::nullopt};
	ChatMessage b{"22222222-2222-4222-8222-222222222222", -5, "two", std::string("2026-11-30T00:00:00Z")};
	auto p = InboxInsertParams({a, b});
	ASSERT_EQ(p.size(), 4u);
	EXPECT_EQ(*p[0], R"({"11111111-1111-4111-8111-111111111111","22222222-2222-4222-8222-222222222222"})");
	EXPECT_EQ(*p[1], R"({"1","-5"})");
	EXPECT_EQ(*p[2], R"({"one","two"})");
	EXPECT_EQ(*p[3], R"({NULL,"2026-11-30T00:00:00Z"})");
}

TEST(InboxSql, StatementKeepsOrderAndDedupes)
{
	std::string sql = InboxInsertSql("we\"ird");
	EXPECT_NE(sql.find(R"(INSERT INTO "we""ird".inbox)"), std::string::npos);
	EXPECT_NE(sql.find("WITH ORDINALITY"), std::string::npos);
	EXPECT_NE(sql.find("ORDER BY ord"), std::string::npos);
	EXPECT_NE(sql.find("ON CONFLICT (message_id) DO NOTHING"), std::string::npos);
	EXPECT_NE(sql.find("ORDER BY seq"), std::string::npos);
	// writers are serialized per inbox, with the service name quoted as a literal
	EXPECT_NE(sql.find("pg_advisory_xact_lock(hashtext('chat_outbox.inbox:we\"ird'))"), std::string::npos);
	EXPECT_NE(InboxInsertSql("o'neil").find("hashtext('chat_outbox.inbox:o''neil')"), std::string::npos);
}
