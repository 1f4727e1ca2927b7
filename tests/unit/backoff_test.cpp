// tests/unit/backoff_test.cpp - capped exponential backoff.
#include <gtest/gtest.h>

#include "backoff.hpp"

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
