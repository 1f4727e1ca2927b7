// tests/unit/gateway/rate_limit_test.cpp - the per-connection send limit (daemon/src/gateway/client/core/rate_limit.hpp).
#include <gtest/gtest.h>

#include "gateway/client/core/rate_limit.hpp"

using chat_outboxd::TokenBucket;

namespace {

// TakeAll spends every token available at now_ms and says how many there were.
int
TakeAll(TokenBucket &b, int64_t now_ms, int64_t rate, int64_t burst)
{
	int taken = 0;
	while (b.Take(now_ms, rate, burst))
		taken++;
	return taken;
}

} // namespace

TEST(TokenBucket, ABurstThenTheRate)
{
	TokenBucket b;
	EXPECT_EQ(TakeAll(b, 1000, 20, 40), 40);
	EXPECT_EQ(b.RetryAfterMs(20), 50);
	EXPECT_FALSE(b.Take(1049, 20, 40));
	EXPECT_TRUE(b.Take(1050, 20, 40));
	EXPECT_FALSE(b.Take(1050, 20, 40));
	EXPECT_EQ(TakeAll(b, 2050, 20, 40), 20); // one second later: the rate's worth
}

TEST(TokenBucket, RefillsUpToTheBurstOnly)
{
	TokenBucket b;
	EXPECT_TRUE(b.Take(0, 5, 3));
	EXPECT_EQ(TakeAll(b, 1000000, 5, 3), 3);
}

TEST(TokenBucket, AClockGoingBackRefillsNothing)
{
	TokenBucket b;
	EXPECT_TRUE(b.Take(5000, 1, 1));
	EXPECT_FALSE(b.Take(4000, 1, 1));
	EXPECT_FALSE(b.Take(5999, 1, 1));
	EXPECT_TRUE(b.Take(6000, 1, 1));
}
