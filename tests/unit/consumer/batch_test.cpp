// tests/unit/consumer/batch_test.cpp - a fetched batch: validation and which jobs were new in the inbox.
#include <gtest/gtest.h>

#include "consumer/core/batch.hpp"

using namespace chat_outboxd;

namespace {

Job
J(const char *id, const std::string &data)
{
	Job j;
	j.id = id;
	j.fields["data"] = data;
	return j;
}

std::string
Data(const char *id)
{
	return std::string(R"({"id":")") + id + R"(","chat_id":7,"body":"b"})";
}

const char kA[] = "11111111-1111-4111-8111-111111111111";
const char kB[] = "22222222-2222-4222-8222-222222222222";

InboxMessage
Row(const char *id)
{
	InboxMessage m;
	m.id = id;
	return m;
}

} // namespace

TEST(Batch, BadDataGetsAReasonOthersAMessage)
{
	Job no_data;
	no_data.id = "x";
	BatchPtr b = MakeBatch({J("1", Data(kA)), J("2", "{}"), no_data});
	ASSERT_EQ(b->jobs.size(), 3u);
	EXPECT_TRUE(b->jobs[0].ToInbox());
	EXPECT_TRUE(b->jobs[0].fail_reason.empty());
	EXPECT_FALSE(b->jobs[1].msg.has_value());
	EXPECT_FALSE(b->jobs[1].fail_reason.empty());
	EXPECT_EQ(b->jobs[2].fail_reason, "invalid message: data missing");
	EXPECT_TRUE(b->AnyMessage());
	EXPECT_TRUE(b->AnyBad());
	EXPECT_EQ(b->pending, 1); // the inbox stage's part
}

TEST(Batch, AJobMarkedByAStalledCheckIsStillAMessage)
{
	Job j = J("1", Data(kA));
	j.fields["defa"] = "job stalled more than allowable limit";
	BatchPtr b = MakeBatch({j});
	EXPECT_TRUE(b->jobs[0].ToInbox());
	EXPECT_FALSE(b->AnyBad());
}

TEST(Batch, FirstJobWithANewIdIsInsertedLaterOnesAreDuplicates)
{
	BatchPtr b = MakeBatch({J("1", Data(kA)), J("2", Data(kA)), J("3", Data(kB))});
	EXPECT_EQ(MarkInserted(*b, {Row(kA)}), 2u);
	EXPECT_TRUE(b->jobs[0].inserted);
	EXPECT_FALSE(b->jobs[1].inserted);
	EXPECT_FALSE(b->jobs[2].inserted);
}

TEST(Batch, RefusedRowsAreNeitherInsertedNorDuplicates)
{
	BatchPtr b = MakeBatch({J("1", Data(kA)), J("2", Data(kB))});
	b->jobs[1].rejected = "inbox refused the message";
	EXPECT_EQ(MarkInserted(*b, {Row(kA)}), 0u);
	EXPECT_TRUE(b->jobs[0].inserted);
	EXPECT_FALSE(b->jobs[1].inserted);
}
