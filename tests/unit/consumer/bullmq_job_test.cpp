// tests/unit/consumer/bullmq_job_test.cpp - the BullMQ job codec: fetch replies, opts, keep policies, backoff.
#include <gtest/gtest.h>

#include "consumer/core/bullmq_job.hpp"

using namespace chat_outboxd;

namespace {

RedisValue
Strs(std::vector<std::string> items)
{
	std::vector<RedisValue> v;
	for (auto &s : items)
		v.push_back(RedisValue::Str(s));
	return RedisValue::Arr(v);
}

} // namespace

TEST(BullmqJob, DecodesFetchReplyInOrder)
{
	// a field the hash lacks comes back nil and is absent from the job
	RedisValue reply = RedisValue::Arr({RedisValue::Int(1795000000000), RedisValue::Int(0),
	                                    Strs({"name", "data", "atm"}), RedisValue::Str("a"), RedisValue::Str("w:u:1"),
	                                    Strs({"message.created", "{}", "2"}), RedisValue::Str("b"),
	                                    RedisValue::Str("w:u:2"),
	                                    RedisValue::Arr({RedisValue(), RedisValue::Str("{\"x\":1}"), RedisValue()})});
	FetchResult fr;
	std::string err;
	ASSERT_TRUE(DecodeFetchReply(reply, &fr, &err)) << err;
	EXPECT_EQ(fr.next_delayed_ms, 1795000000000);
	ASSERT_EQ(fr.jobs.size(), 2u);
	EXPECT_EQ(fr.jobs[0].id, "a");
	EXPECT_EQ(fr.jobs[0].token, "w:u:1");
	EXPECT_EQ(*fr.jobs[0].Field("name"), "message.created");
	EXPECT_EQ(fr.jobs[0].AttemptsMade(), 2);
	EXPECT_EQ(fr.jobs[1].Field("name"), nullptr);
	EXPECT_EQ(*fr.jobs[1].Field("data"), "{\"x\":1}");
	EXPECT_EQ(fr.jobs[1].AttemptsMade(), 0);
}

TEST(BullmqJob, EmptyAndMalformedReplies)
{
	FetchResult fr;
	std::string err;
	EXPECT_TRUE(DecodeFetchReply(RedisValue::Arr({RedisValue::Int(0), RedisValue::Int(250)}), &fr, &err));
	EXPECT_TRUE(fr.jobs.empty());
	EXPECT_EQ(fr.rate_limited_ms, 250);
	EXPECT_FALSE(DecodeFetchReply(RedisValue::Err("NOSCRIPT x"), &fr, &err));
	EXPECT_EQ(err, "NOSCRIPT x");
	EXPECT_FALSE(DecodeFetchReply(RedisValue::Arr({RedisValue::Int(0), RedisValue::Int(0), RedisValue::Str("x")}),
	                              &fr, &err));
	RedisValue names = Strs({"data", "opts"});
	RedisValue incomplete = RedisValue::Arr({RedisValue::Int(0), RedisValue::Int(0), names, RedisValue::Str("a"),
	                                         RedisValue::Str("t")});
	EXPECT_FALSE(DecodeFetchReply(incomplete, &fr, &err));
	RedisValue short_values = RedisValue::Arr({RedisValue::Int(0), RedisValue::Int(0), names, RedisValue::Str("a"),
	                                           RedisValue::Str("t"), Strs({"{}"})});
	EXPECT_FALSE(DecodeFetchReply(short_values, &fr, &err));
}

TEST(BullmqJob, Statuses)
{
	std::vector<int64_t> st;
	std::string err;
	EXPECT_TRUE(DecodeStatuses(RedisValue::Arr({RedisValue::Int(0), RedisValue::Int(-2)}), 2, &st, &err));
	EXPECT_EQ(st, (std::vector<int64_t>{0, -2}));
	EXPECT_FALSE(DecodeStatuses(RedisValue::Arr({RedisValue::Int(0)}), 2, &st, &err));
	EXPECT_STREQ(FinishStatusText(-6), "lock held by another worker");
}

TEST(BullmqJob, OptionsFromOpts)
{
	Job j;
	j.fields["opts"] = R"({"jobId":"x","attempts":3,"backoff":{"type":"exponential","delay":200},"removeOnComplete":true,"removeOnFail":{"age":60,"count":5},"lifo":true})";
	JobOptions o = j.Options();
	EXPECT_EQ(o.attempts, 3);
	EXPECT_EQ(o.backoff.type, "exponential");
	EXPECT_EQ(o.backoff.delay_ms, 200);
	EXPECT_TRUE(o.lifo);
	ASSERT_TRUE(o.remove_on_complete);
	EXPECT_EQ(o.remove_on_complete->count, 0);
	ASSERT_TRUE(o.remove_on_fail);
	EXPECT_EQ(o.remove_on_fail->count, 5);
	EXPECT_EQ(o.remove_on_fail->age_s, 60);
}

TEST(BullmqJob, BadOptsGiveDefaultsNotPoison)
{
	Job j;
	j.fields["opts"] = "{not json";
	JobOptions o = j.Options();
	EXPECT_EQ(o.attempts, 0);
	EXPECT_FALSE(o.remove_on_complete);
	Job none;
	EXPECT_FALSE(none.Options().remove_on_fail);
}

TEST(BullmqJob, KeepPolicies)
{
	EXPECT_EQ(ParseKeep("true")->count, 0);
	EXPECT_EQ(ParseKeep("false")->count, -1);
	EXPECT_EQ(ParseKeep("100")->count, 100);
	EXPECT_EQ(ParseKeep(R"({"age":3600})")->count, -1);
	EXPECT_EQ(ParseKeep(R"({"age":3600})")->age_s, 3600);
	EXPECT_FALSE(ParseKeep("\"x\""));
}

TEST(BullmqJob, Backoff)
{
	EXPECT_EQ(BackoffDelay({"fixed", 300}, 1), 300);
	EXPECT_EQ(BackoffDelay({"fixed", 300}, 4), 300);
	EXPECT_EQ(BackoffDelay({"exponential", 200}, 1), 200);
	EXPECT_EQ(BackoffDelay({"exponential", 200}, 2), 400);
	EXPECT_EQ(BackoffDelay({"exponential", 200}, 3), 800);
	EXPECT_EQ(BackoffDelay({"", 0}, 3), 0);
}

TEST(BullmqJob, StartsLostCountsStartsThatNeverFinished)
{
	Job j;
	EXPECT_EQ(j.StartsLost(), 0);
	j.fields["ats"] = "1"; // this start only
	EXPECT_EQ(j.StartsLost(), 0);
	j.fields["ats"] = "3"; // two earlier starts, neither finished: two crashes
	EXPECT_EQ(j.StartsLost(), 2);
	j.fields["atm"] = "2"; // the earlier starts were attempts that failed and were retried
	EXPECT_EQ(j.StartsLost(), 0);
	j.fields["atm"] = "5"; // never negative
	EXPECT_EQ(j.StartsLost(), 0);
}
