// tests/unit/gateway/recovery_test.cpp - where a Socket.IO CONNECT resumes from, and the pids we issue.
#include <gtest/gtest.h>

#include "gateway/engineio/core/recovery.hpp"

using namespace chat_outboxd::sio;
using nlohmann::json;

TEST(Recovery, NoAuthNoReplay)
{
	EXPECT_EQ(ReadResume(json()).after, -1);
	EXPECT_EQ(ReadResume(json::array({1})).after, -1);
	EXPECT_EQ(ReadResume(json::object({{"token", "t"}})).after, -1);
	EXPECT_EQ(ReadResume(json::object()).pid, "");
}

TEST(Recovery, OffsetThenSinceThenPid)
{
	EXPECT_EQ(ReadResume({{"offset", "17"}, {"since", 5}, {"pid", "abc.3"}}).after, 17);
	EXPECT_EQ(ReadResume({{"since", 5}, {"pid", "abc.3"}}).after, 5);
	EXPECT_EQ(ReadResume({{"pid", "abc.3"}}).after, 3);
	EXPECT_EQ(ReadResume({{"offset", 0}}).after, 0);
}

TEST(Recovery, BadValuesCountAsAbsent)
{
	EXPECT_EQ(ReadResume({{"offset", -1}, {"since", 4}}).after, 4);
	EXPECT_EQ(ReadResume({{"offset", "x"}, {"pid", "abc.9"}}).after, 9);
	EXPECT_EQ(ReadResume({{"since", 1.5}}).after, -1);
	EXPECT_EQ(ReadResume({{"pid", "abc"}}).after, -1); // a pid without a seq
	EXPECT_EQ(ReadResume({{"pid", "abc.-2"}}).after, -1);
}

TEST(Recovery, OnlyPlainPidsAreKept)
{
	EXPECT_EQ(ReadResume({{"pid", "Ab-_.12"}}).pid, "Ab-_.12");
	EXPECT_EQ(ReadResume({{"pid", "a b.1"}}).pid, "");
	EXPECT_EQ(ReadResume({{"pid", "a b.1"}}).after, -1); // an unusable pid says nothing about the seq
	EXPECT_EQ(ReadResume({{"pid", std::string(65, 'a')}}).pid, "");
	EXPECT_EQ(ReadResume({{"pid", std::string(64, 'a')}}).pid, std::string(64, 'a'));
	EXPECT_EQ(ReadResume({{"pid", 12}}).pid, "");
	EXPECT_EQ(ReadResume({{"pid", ""}}).pid, "");
}

TEST(Recovery, PidCarriesTheHighestSeq)
{
	EXPECT_EQ(MakePid("r4nd0m", 42), "r4nd0m.42");
	EXPECT_EQ(MakePid("r4nd0m", 0), "r4nd0m.0");
	EXPECT_EQ(MakePid("r4nd0m", -1), "r4nd0m.0"); // not known yet: a resume replays from the start
	EXPECT_EQ(ReadResume({{"pid", MakePid("r4nd0m", -1)}}).after, 0);
	EXPECT_EQ(ReadResume({{"pid", MakePid("r4nd0m", 42)}}).after, 42);
}
