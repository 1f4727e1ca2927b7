// tests/unit/inbox/inbox_sql_test.cpp - the inbox batch statement and its array parameters.
#include <gtest/gtest.h>

#include "inbox/core/inbox_sql.hpp"

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
	ChatMessage a{"11111111-1111-4111-8111-111111111111", 1, "one", std::nullopt, std::nullopt, Change::None, "", 0, std::nullopt};
	ChatMessage b{"22222222-2222-4222-8222-222222222222", -5, "two", std::string("2026-11-30T00:00:00Z"),
	              std::string("alice"), Change::None, "", 0, std::nullopt};
	auto p = InboxInsertParams({a, b}, 41);
	ASSERT_EQ(p.size(), 11u);
	EXPECT_EQ(*p[0], R"({"11111111-1111-4111-8111-111111111111","22222222-2222-4222-8222-222222222222"})");
	EXPECT_EQ(*p[1], R"({"1","-5"})");
	EXPECT_EQ(*p[2], R"({"one","two"})");
	EXPECT_EQ(*p[3], R"({NULL,"2026-11-30T00:00:00Z"})");
	EXPECT_EQ(*p[4], "41");
	EXPECT_EQ(*p[5], R"({NULL,"alice"})");
	EXPECT_FALSE(InboxInsertParams({a}, std::nullopt)[4].has_value());
	// a message has no change: NULL target, kind and times, version 0
	EXPECT_EQ(*p[6], R"({NULL,NULL})");
	EXPECT_EQ(*p[7], R"({NULL,NULL})");
	EXPECT_EQ(*p[8], R"({"0","0"})");
}

TEST(InboxSql, ParamsOfEditsAndDeletes)
{
	ChatMessage e{"33333333-3333-4333-8333-333333333333", 1, "new", std::nullopt, std::string("alice"), Change::None, "", 0, std::nullopt};
	e.change = Change::Edited;
	e.target = "11111111-1111-4111-8111-111111111111";
	e.version = 2;
	e.changed_at = "2026-12-01T00:00:00Z";
	ChatMessage d{"44444444-4444-4444-8444-444444444444", 1, "", std::nullopt, std::nullopt, Change::None, "", 0, std::nullopt};
	d.change = Change::Deleted;
	d.target = e.target;
	d.version = 3;
	d.changed_at = "2026-12-02T00:00:00Z";
	auto p = InboxInsertParams({e, d}, std::nullopt);
	EXPECT_EQ(*p[6], R"({"11111111-1111-4111-8111-111111111111","11111111-1111-4111-8111-111111111111"})");
	EXPECT_EQ(*p[7], R"({"edited","deleted"})");
	EXPECT_EQ(*p[8], R"({"2","3"})");
	EXPECT_EQ(*p[9], R"({"2026-12-01T00:00:00Z",NULL})");
	EXPECT_EQ(*p[10], R"({NULL,"2026-12-02T00:00:00Z"})");
}

TEST(InboxSql, StatementKeepsOrderAndDedupes)
{
	std::string sql = InboxInsertSql("we\"ird", true);
	EXPECT_NE(sql.find(R"(INSERT INTO "we""ird".inbox)"), std::string::npos);
	EXPECT_NE(sql.find("WITH ORDINALITY"), std::string::npos);
	EXPECT_NE(sql.find("ORDER BY ord"), std::string::npos);
	EXPECT_NE(sql.find("ON CONFLICT (message_id) DO NOTHING"), std::string::npos);
	EXPECT_NE(sql.find("ORDER BY seq"), std::string::npos);
	// other writers' rows above the highest pushed seq, bounded per write
	EXPECT_NE(sql.find("w.seq OPERATOR(pg_catalog.>) (SELECT CASE WHEN v OPERATOR(pg_catalog.=) '' THEN NULL ELSE "
	                   "v::pg_catalog.int8 END FROM pg_catalog.current_setting('chat_outboxd.inbox_5') v)"),
	          std::string::npos);
	EXPECT_NE(sql.find("LIMIT " + std::to_string(InboxOthersPerWrite())), std::string::npos);
	EXPECT_NE(sql.find("OPERATOR(pg_catalog.<) " + std::to_string(InboxOthersBytesPerWrite())), std::string::npos);
}

TEST(InboxSql, WithoutTheSenderColumnNothingNamesIt)
{
	// chat_outbox 1.0's inbox has no sender (inbox/inbox_schema.hpp): the statement neither writes nor
	// reads it, and the senders' value (6) is still taken, so the values are the same.
	std::string sql = InboxInsertSql("workers", false);
	EXPECT_EQ(sql.find("e.sender"), std::string::npos);
	EXPECT_EQ(sql.find("o.sender"), std::string::npos);
	EXPECT_EQ(sql.find("created_at, sender)"), std::string::npos);
	EXPECT_NE(sql.find("v::pg_catalog.text[] END FROM pg_catalog.current_setting('chat_outboxd.inbox_6') v"),
	          std::string::npos);
	EXPECT_EQ(sql.find("ins.target"), std::string::npos);         // the input has it (value 7), the table not
	EXPECT_NE(sql.find("WHERE kind IS NULL"), std::string::npos); // an edit or delete is not stored as a message
	EXPECT_NE(InboxInsertSql("workers", true).find("(message_id, chat_id, body, created_at, sender, target, kind, version, "
	                                               "edited_at, deleted_at)"),
	          std::string::npos);
}

TEST(InboxSql, LockIsItsOwnStatementKeyedByService)
{
	// The insert does not take the lock: its snapshot would be older than the wait for it.
	EXPECT_EQ(InboxInsertSql("workers", true).find("advisory"), std::string::npos);
	EXPECT_EQ(InboxLockSql(), "SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext($1::pg_catalog.text))");
	EXPECT_EQ(InboxLockKey("o'neil"), "chat_outbox.inbox:o'neil"); // a parameter, never spliced into SQL
}

TEST(InboxSql, StageSettingsLastOneWriteAndBoundIt)
{
	// Local to the write's transaction (true): nothing stays on a connection a pooler hands on.
	const std::string sql = InboxStageSql();
	EXPECT_EQ(sql.rfind("SELECT pg_catalog.set_config('enable_seqscan', 'off', true), "
	                    "pg_catalog.set_config('plan_cache_mode', 'force_generic_plan', true), "
	                    "pg_catalog.set_config('tcp_user_timeout', $1, true), "
	                    "pg_catalog.set_config('chat_outboxd.inbox_1', $2, true), ",
	                    0),
	          0u);
	EXPECT_NE(sql.find("pg_catalog.set_config('chat_outboxd.inbox_11', $12, true)"), std::string::npos);
	EXPECT_EQ(sql.find("false"), std::string::npos);
}

TEST(InboxSql, StagedValuesAreParametersReadBackOnce)
{
	// NULL is staged as '' and read back as NULL; the values stay parameters (never in the text)
	auto params = InboxStageParams(2500, {std::string("{a}"), std::nullopt});
	ASSERT_EQ(params.size(), 3u);
	EXPECT_EQ(params[0], std::optional<std::string>("2500"));
	EXPECT_EQ(params[1], std::optional<std::string>("{a}"));
	EXPECT_EQ(params[2], std::optional<std::string>(""));
	const std::string insert = InboxInsertSql("workers", true);
	EXPECT_EQ(insert.find('$'), std::string::npos);
	for (int n = 1; n <= kInboxValues; n++)
		EXPECT_NE(insert.find("'" + InboxStagedName(n) + "'"), std::string::npos) << n;
	EXPECT_EQ(InboxInsertParams({}, std::nullopt).size(), static_cast<size_t>(kInboxValues));
}

TEST(InboxSql, EveryFunctionAndOperatorIsQualified)
{
	// Names a role could shadow with its own function, operator or type earlier in search_path.
	for (const std::string &sql : {InboxInsertSql("workers", true), InboxInsertSql("workers", false), InboxLockSql(),
	                               InboxHighWaterSql("workers"), InboxSenderColumnSql(), InboxStageSql()}) {
		for (const char *bare : {" to_json(", "(to_json(", " hashtext(", "(hashtext(", " unnest(", "(unnest(",
		                         " max(", "(max(", " #>> ", " = ", " > ", "::text", "::uuid", "::bigint",
		                         "::timestamptz", "::float8", "::int8", " pg_advisory_xact_lock("})
			EXPECT_EQ(sql.find(bare), std::string::npos) << "unqualified '" << bare << "' in: " << sql;
	}
}

namespace {

std::vector<std::optional<std::string>>
Row(const char *id, const char *seq, const char *kind, const char *created = nullptr)
{
	std::vector<std::optional<std::string>> row(kInboxColumnCount);
	row[kInboxId] = std::string(id);
	row[kInboxSeq] = std::string(seq);
	row[kInboxChatId] = std::string("7");
	row[kInboxBody] = std::string("b");
	if (created) {
		row[kInboxCreatedIso] = std::string(created);
		row[kInboxCreatedEpoch] = std::string("1.5");
	}
	row[kInboxKind] = std::string(kind);
	return row;
}

} // namespace

TEST(InboxSql, ParsesRowsByKind)
{
	PgRows rows = {Row("a", "3", "o"), Row("b", "5", "e", "2026-11-30T00:00:00Z"), Row("c", "9", "n", "x")};
	rows[2][kInboxSender] = std::string("alice");
	InboxRows out;
	std::string error;
	ASSERT_TRUE(ParseInboxRows(std::move(rows), &out, &error)) << error;
	ASSERT_EQ(out.others.size(), 1u);
	EXPECT_EQ(out.others[0].id, "a");
	EXPECT_EQ(out.others[0].seq, 3);
	EXPECT_TRUE(out.others[0].other_writer);
	ASSERT_EQ(out.existing.size(), 1u);
	EXPECT_FALSE(out.existing[0].other_writer);
	EXPECT_EQ(out.existing[0].created_at, "2026-11-30T00:00:00Z");
	ASSERT_EQ(out.inserted.size(), 1u);
	EXPECT_EQ(out.inserted[0].chat_id, 7);
	EXPECT_EQ(out.inserted[0].sender, std::optional<std::string>("alice"));
	EXPECT_FALSE(out.existing[0].sender.has_value()); // sent without one: NULL, not ""
	ASSERT_EQ(out.created.size(), 1u);
	EXPECT_EQ(*out.created[0], 1.5);
	EXPECT_FALSE(out.read_up_to.has_value());
}

TEST(InboxSql, RefusesARowWithoutSeq)
{
	// A NULL seq is a message the statement could not see: never a row to push or to skip.
	auto bad = Row("a", "1", "e");
	bad[kInboxSeq].reset();
	InboxRows out;
	std::string error;
	EXPECT_FALSE(ParseInboxRows({bad}, &out, &error));
	EXPECT_FALSE(ParseInboxRows({Row("a", "1", "x")}, &out, &error));
	EXPECT_FALSE(ParseInboxRows({Row("a", "1x", "n")}, &out, &error));
}

TEST(InboxSql, MarksOthersCutAtTheBound)
{
	PgRows rows;
	for (int i = 0; i < InboxOthersPerWrite(); i++)
		rows.push_back(Row("o", std::to_string(100 + i).c_str(), "o"));
	InboxRows out;
	std::string error;
	ASSERT_TRUE(ParseInboxRows(std::move(rows), &out, &error));
	ASSERT_TRUE(out.read_up_to.has_value());
	EXPECT_EQ(*out.read_up_to, 100 + InboxOthersPerWrite() - 1);
}

TEST(InboxSql, MarksOthersCutAtTheByteBound)
{
	// Bodies of 100 KiB: the row that crosses the bound is the last one the statement returns.
	const std::string body(100 * 1024, 'b');
	const int64_t n = InboxOthersBytesPerWrite() / static_cast<int64_t>(body.size()) + 1;
	PgRows rows;
	for (int64_t i = 0; i < n; i++) {
		rows.push_back(Row("o", std::to_string(100 + i).c_str(), "o"));
		rows.back()[kInboxBody] = body;
	}
	InboxRows out;
	std::string error;
	ASSERT_TRUE(ParseInboxRows(std::move(rows), &out, &error));
	ASSERT_TRUE(out.read_up_to.has_value());
	EXPECT_EQ(*out.read_up_to, 100 + n - 1);

	PgRows few;
	few.push_back(Row("o", "7", "o"));
	InboxRows small;
	ASSERT_TRUE(ParseInboxRows(std::move(few), &small, &error));
	EXPECT_FALSE(small.read_up_to.has_value());
}

TEST(InboxSql, RowRefusalsAreAboutContentNotTheServer)
{
	for (const char *s : {"22007", "22P02", "23505", "23514", "P0001"})
		EXPECT_TRUE(InboxRowRefused(s)) << s;
	for (const char *s : {"42501", "42P01", "57P01", "08006", "", "2"})
		EXPECT_FALSE(InboxRowRefused(s)) << s;
	EXPECT_TRUE(InboxDataException("22008"));
	EXPECT_FALSE(InboxDataException("23505"));
}
