// tests/unit/common_relay/relay_health_test.cpp - the relay's outage state: backoff, what is logged once,
// and when a pass goes again before sleeping.
#include <gtest/gtest.h>

#include "common/relay/relay_health.hpp"

using namespace chat_outbox;

TEST(RelayHealth, OutageAndRecovery)
{
	RelayHealth h;
	bool log_it;
	int64_t total;
	EXPECT_TRUE(h.OnFailure(&log_it) == 50 && log_it); // outage starts: log once
	EXPECT_TRUE(h.OnFailure(&log_it) == 100 && !log_it);
	for (int i = 0; i < 10; i++)
		h.OnFailure(&log_it);
	EXPECT_TRUE(h.OnFailure(&log_it) == 1000 && !log_it); // capped at 1 s, as every server retry (common/backoff.hpp)
	h.OnSuccess(500, false, &log_it, &total);             // back, still draining: quiet
	EXPECT_TRUE(!log_it && !h.Failing() && h.Recovering());
	h.OnSuccess(120, true, &log_it, &total); // drained: "redis back, relayed 620"
	EXPECT_TRUE(log_it && total == 620 && !h.Recovering());
	h.OnSuccess(3, true, &log_it, &total);
	EXPECT_TRUE(!log_it);
	EXPECT_TRUE(h.OnFailure(&log_it) == 50 && log_it); // a new outage logs again
}

TEST(RelayHealth, MoreToDrain)
{
	EXPECT_TRUE(MoreToDrain(500, 500) && !MoreToDrain(499, 500));
}
