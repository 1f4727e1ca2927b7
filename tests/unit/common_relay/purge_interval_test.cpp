// tests/unit/common_relay/purge_interval_test.cpp - how often both relays run their purge round.
#include "common/relay/purge_interval.hpp"

#include <gtest/gtest.h>

using chat_outbox::PurgeIntervalMs;

TEST(PurgeInterval, TwicePerRetentionWithinOneToTenSeconds)
{
	EXPECT_EQ(PurgeIntervalMs(2, 0), 1000);   // 2 s: 1 s
	EXPECT_EQ(PurgeIntervalMs(1, 0), 1000);   // the floor
	EXPECT_EQ(PurgeIntervalMs(10, 0), 5000);  // 10 s: 5 s
	EXPECT_EQ(PurgeIntervalMs(20, 0), 10000); // the ceiling
	EXPECT_EQ(PurgeIntervalMs(86400, 0), 10000);
}

TEST(PurgeInterval, TheShorterRetentionInForce)
{
	EXPECT_EQ(PurgeIntervalMs(86400, 4), 2000); // the inbox's is shorter
	EXPECT_EQ(PurgeIntervalMs(6, 86400), 3000); // the outbox's is
	EXPECT_EQ(PurgeIntervalMs(0, 8), 4000);     // only the inbox's in force
	EXPECT_EQ(PurgeIntervalMs(8, 0), 4000);     // only the outbox's
}

TEST(PurgeInterval, NoRetentionOrHostileValues)
{
	EXPECT_EQ(PurgeIntervalMs(0, 0), 10000);
	EXPECT_EQ(PurgeIntervalMs(-5, -1), 10000);               // negative is none
	EXPECT_EQ(PurgeIntervalMs(INT64_MAX, INT64_MAX), 10000); // no overflow
	EXPECT_EQ(PurgeIntervalMs(INT64_MAX, 3), 1500);
}
