// tests/unit/common_relay/shard_outage_test.cpp - a shard's outage: logged once each way, not tried
// before its backoff ends.
#include <gtest/gtest.h>

#include "common/backoff.hpp"
#include "common/relay/shard_outage.hpp"

using namespace chat_outbox;

TEST(ShardOutage, DownAndBack)
{
	ShardOutage o;
	EXPECT_EQ(o.State(), ShardState::kUp);
	EXPECT_TRUE(o.Due(0));
	EXPECT_FALSE(o.Back());      // up all along: nothing to log
	EXPECT_TRUE(o.Failed(1000)); // the outage starts: logged
	EXPECT_TRUE(o.Down());
	EXPECT_FALSE(o.Due(1000 + kServerRetryFirstMs - 1));
	EXPECT_TRUE(o.Due(1000 + kServerRetryFirstMs));
	EXPECT_FALSE(o.Failed(2000)); // goes on: quiet, the backoff doubles
	EXPECT_FALSE(o.Due(2000 + 2 * kServerRetryFirstMs - 1));
	for (int i = 0; i < 20; i++)
		o.Failed(3000);
	EXPECT_FALSE(o.Due(3000 + kServerRetryMaxMs - 1)); // capped as every server retry
	EXPECT_TRUE(o.Due(3000 + kServerRetryMaxMs));
	EXPECT_TRUE(o.Back()); // "shard back", once
	EXPECT_EQ(o.State(), ShardState::kUp);
	EXPECT_FALSE(o.Back());
	EXPECT_TRUE(o.Failed(5000)); // a new outage is logged again, from the first step
	EXPECT_TRUE(o.Due(5000 + kServerRetryFirstMs));
	EXPECT_FALSE(o.Due(5000 + kServerRetryFirstMs - 1));
}
