// tests/unit/relay/wake_recheck_test.cpp - looking again after a stream wake-up that found nothing
// (relay/src/core/wake_recheck.hpp).
#include <algorithm>

#include <gtest/gtest.h>

#include "core/wake_recheck.hpp"

using chat_outbox::relay::WakeRecheck;

TEST(WakeRecheck, NothingToDoWithoutAStreamWakeUp)
{
	WakeRecheck r;
	EXPECT_EQ(r.AfterPass(false, 0), -1);
	EXPECT_FALSE(r.Looking());
}

TEST(WakeRecheck, AWakeUpThatClaimedRowsEndsThere)
{
	WakeRecheck r;
	EXPECT_EQ(r.AfterPass(true, 3), -1);
	EXPECT_FALSE(r.Looking());
}

TEST(WakeRecheck, AnEmptyWakeUpLooksAgainWithGrowingDelaysAboutTenSecondsInAll)
{
	WakeRecheck r;
	int64_t total = 0;
	int64_t expected = 1;
	for (int i = 0; i < WakeRecheck::kTries; i++) {
		int64_t d = r.AfterPass(i == 0, 0);
		EXPECT_EQ(d, expected) << "look " << i;
		total += d;
		expected = std::min<int64_t>(expected * 2, 1000);
		EXPECT_TRUE(r.Looking());
	}
	EXPECT_EQ(total, 1023 + 9 * 1000);
	EXPECT_EQ(r.AfterPass(false, 0), -1) << "gives up after kTries looks";
	EXPECT_FALSE(r.Looking());
}

TEST(WakeRecheck, ALookThatFindsTheRowsEndsTheLook)
{
	WakeRecheck r;
	EXPECT_EQ(r.AfterPass(true, 0), 1);
	EXPECT_EQ(r.AfterPass(false, 0), 2);
	EXPECT_EQ(r.AfterPass(false, 5), -1);
	EXPECT_FALSE(r.Looking());
	EXPECT_EQ(r.AfterPass(true, 0), 1) << "the next empty wake-up starts again at 1 ms";
}

TEST(WakeRecheck, AnotherWakeUpDuringALookContinuesIt)
{
	WakeRecheck r;
	EXPECT_EQ(r.AfterPass(true, 0), 1);
	EXPECT_EQ(r.AfterPass(true, 0), 2);
	EXPECT_EQ(r.AfterPass(false, 0), 4);
}
