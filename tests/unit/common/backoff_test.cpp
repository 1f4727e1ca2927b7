// tests/unit/common/backoff_test.cpp - capped exponential backoff.
#include <gtest/gtest.h>

#include "common/backoff.hpp"

TEST(Backoff, DoublesUpToTheCapAndResets)
{
	chat_outbox::Backoff b(50, 5000);
	EXPECT_FALSE(b.Failing());
	std::vector<int64_t> got;
	for (int i = 0; i < 9; i++)
		got.push_back(b.Next());
	EXPECT_EQ(got, (std::vector<int64_t>{50, 100, 200, 400, 800, 1600, 3200, 5000, 5000}));
	EXPECT_TRUE(b.Failing());
	EXPECT_EQ(b.Failures(), 9);
	b.Reset();
	EXPECT_FALSE(b.Failing());
	EXPECT_EQ(b.Next(), 50);
}

TEST(Backoff, DelayAfterNFailuresMatchesNext)
{
	chat_outbox::Backoff b(1000, 60000);
	EXPECT_EQ(b.Delay(0), 1000);
	EXPECT_EQ(b.Delay(1), 2000);
	EXPECT_EQ(b.Delay(5), 32000);
	EXPECT_EQ(b.Delay(6), 60000);
	EXPECT_EQ(b.Delay(1000), 60000); // no overflow however long the outage
	for (int64_t n = 0; n < 10; n++)
		EXPECT_EQ(b.Next(), chat_outbox::Backoff(1000, 60000).Delay(n));
}
