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
	EXPECT_TRUE(h.OnFailure("connect: Connection refused", &log_it) == 50 && log_it); // outage starts: log once
	EXPECT_TRUE(h.OnFailure("connect: Connection refused", &log_it) == 100 && !log_it);
	for (int i = 0; i < 10; i++)
		h.OnFailure("connect: Connection refused", &log_it);
	EXPECT_TRUE(h.OnFailure("connect: Connection refused", &log_it) == 1000 && !log_it); // capped at 1 s, as every server retry (common/backoff.hpp)
	h.OnSuccess(500, false, &log_it, &total);                                            // back, still draining: quiet
	EXPECT_TRUE(!log_it && !h.Failing() && h.Recovering());
	h.OnSuccess(120, true, &log_it, &total); // drained: "redis back, relayed 620"
	EXPECT_TRUE(log_it && total == 620 && !h.Recovering());
	h.OnSuccess(3, true, &log_it, &total);
	EXPECT_TRUE(!log_it);
	EXPECT_TRUE(h.OnFailure("connect: Connection refused", &log_it) == 50 && log_it); // a new outage logs again
}

TEST(RelayHealth, MoreToDrain)
{
	EXPECT_TRUE(MoreToDrain(500, 500) && !MoreToDrain(499, 500));
}

// An outage whose reason changes names the new one once; the same reason again stays quiet, and a
// recovery forgets the reasons (a new outage logs whatever its reason).
TEST(RelayHealth, ChangedReasonLoggedOnce)
{
	RelayHealth h;
	bool log_it = false;
	int64_t total = 0;
	h.OnFailure("read: Server closed the connection", &log_it);
	EXPECT_TRUE(log_it);
	h.OnFailure("connect: Connection refused", &log_it);
	EXPECT_TRUE(log_it);
	h.OnFailure("connect: Connection refused", &log_it);
	EXPECT_FALSE(log_it);
	h.OnFailure("LOADING Redis is loading the dataset in memory", &log_it);
	EXPECT_TRUE(log_it);
	h.OnSuccess(5, true, &log_it, &total);
	EXPECT_TRUE(log_it);
	h.OnFailure("LOADING Redis is loading the dataset in memory", &log_it);
	EXPECT_TRUE(log_it); // a new outage
}

// Where a cause was met is no new cause: a cluster's masters one after another, then its slot map.
TEST(RelayHealth, SameCauseElsewhereStaysQuiet)
{
	RelayHealth h;
	bool log_it = false;
	const char *expired = "TLS: server certificate verify failed: certificate has expired";
	h.OnFailure(std::string("redis cluster: master 127.0.0.1:7001: connect: ") + expired, &log_it);
	EXPECT_TRUE(log_it);
	h.OnFailure(std::string("redis cluster: master 127.0.0.1:7002: connect: ") + expired, &log_it);
	EXPECT_FALSE(log_it);
	h.OnFailure(std::string("redis cluster: no slot map: 127.0.0.1:7001: connect: ") + expired, &log_it);
	EXPECT_FALSE(log_it);
}

// Two causes met in turn (two connections failing differently) are one line each, not one per turn.
TEST(RelayHealth, AlternatingCausesLoggedOnceEach)
{
	RelayHealth h;
	bool log_it = false;
	int logged = 0;
	for (int i = 0; i < 6; i++) {
		h.OnFailure(i % 2 ? "read: Server closed the connection" : "connect: Connection refused", &log_it);
		logged += log_it;
	}
	EXPECT_EQ(logged, 2);
}
