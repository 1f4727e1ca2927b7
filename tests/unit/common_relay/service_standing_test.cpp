// tests/unit/common_relay/service_standing_test.cpp - one service's standing in a relay's rounds: its own
// failure's backoff, what is logged and what recorded, a pass that ends it, the waits for a layout and for a shard.
#include <gtest/gtest.h>

#include <cstring>

#include "common/backoff.hpp"
#include "common/relay/service_standing.hpp"

using namespace chat_outbox;

TEST(ServiceStanding, ZeroIsRelaying)
{
	ServiceStanding s;
	std::memset(static_cast<void *>(&s), 0, sizeof s); // as the extension's C struct clears it
	EXPECT_EQ(s.State(), ServiceState::kRelaying);
	EXPECT_TRUE(s.Due(0));
	EXPECT_EQ(s.Failures(), 0);
	EXPECT_FALSE(s.Worked()); // nothing ended: no "relays again"
	ServiceStanding v{};
	EXPECT_EQ(v.State(), ServiceState::kRelaying);
	EXPECT_EQ(v.RetryAtMs(), 0);
}

TEST(ServiceStanding, FailureBacksOffAndIsLoggedOnce)
{
	ServiceStanding s{};
	// starts: logged and recorded
	EXPECT_EQ(s.Failed("relation \"billing.outbox\" does not exist", 1000), FailureNews::kStarted);
	EXPECT_EQ(s.State(), ServiceState::kFailing);
	EXPECT_EQ(s.RetryAtMs(), 1000 + kServerRetryFirstMs);
	EXPECT_FALSE(s.Due(1000 + kServerRetryFirstMs - 1));
	EXPECT_TRUE(s.Due(1000 + kServerRetryFirstMs));
	EXPECT_EQ(s.Failed("relation \"billing.outbox\" does not exist", 2000), FailureNews::kSame); // quiet
	EXPECT_EQ(s.RetryAtMs(), 2000 + 2 * kServerRetryFirstMs);
	EXPECT_EQ(s.Failed("NOPERM", 3000), FailureNews::kReasonChanged); // recorded, not logged
	EXPECT_EQ(s.Failed("NOPERM", 3500), FailureNews::kSame);
	for (int i = 0; i < 20; i++)
		s.Failed("NOPERM", 4000);
	EXPECT_EQ(s.RetryAtMs(), 4000 + kServerRetryMaxMs); // capped as every server retry
	EXPECT_EQ(s.Failures(), 24);
	EXPECT_TRUE(s.Worked()); // "relays again", once
	EXPECT_EQ(s.State(), ServiceState::kRelaying);
	EXPECT_EQ(s.Failures(), 0);
	EXPECT_TRUE(s.Due(0));
	EXPECT_FALSE(s.Worked());
	EXPECT_EQ(s.Failed("NOPERM", 5000), FailureNews::kStarted); // a new failure is logged again, from the first step
	EXPECT_EQ(s.RetryAtMs(), 5000 + kServerRetryFirstMs);
}

TEST(ServiceStanding, LayoutWaitIsNoFailure)
{
	ServiceStanding s{};
	s.WaitForLayout(1000);
	EXPECT_EQ(s.State(), ServiceState::kWaitingForLayout);
	EXPECT_FALSE(s.Due(1000 + kLayoutRecheckMs - 1));
	EXPECT_TRUE(s.Due(1000 + kLayoutRecheckMs));
	EXPECT_EQ(s.Failures(), 0);
	EXPECT_FALSE(s.Worked()); // the change went through: nothing to log
}

TEST(ServiceStanding, WaitDoesNotEndAFailure)
{
	ServiceStanding s{};
	s.Failed("x", 0);
	s.WaitForLayout(100);
	EXPECT_EQ(s.Failures(), 1);
	EXPECT_EQ(s.Failed("x", 400), FailureNews::kSame); // still the same failure
	EXPECT_TRUE(s.Worked());
}

TEST(ServiceStanding, ShardFailure)
{
	ServiceStanding s{};
	// a shard that was up when the pass started: the next pass, at once, leaves its partitions out
	EXPECT_TRUE(s.ShardFailed(true, 1000));
	EXPECT_TRUE(s.Due(1000));
	EXPECT_EQ(s.State(), ServiceState::kRelaying);
	// one that was down already (the pass needed it): look again later, no failure of the service
	EXPECT_FALSE(s.ShardFailed(false, 1000));
	EXPECT_EQ(s.State(), ServiceState::kWaitingForShard);
	EXPECT_FALSE(s.Due(1000 + kShardDownRecheckMs - 1));
	EXPECT_TRUE(s.Due(1000 + kShardDownRecheckMs));
	EXPECT_EQ(s.Failures(), 0);
}
