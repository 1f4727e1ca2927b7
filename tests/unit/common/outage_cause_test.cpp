// tests/unit/common/outage_cause_test.cpp - what an outage's log names as its cause, and which causes
// one outage logs.
#include <gtest/gtest.h>

#include <string>

#include "common/outage_cause.hpp"

using chat_outbox::OutageCause;
using chat_outbox::OutageCauses;

TEST(OutageCause, LastPartWithoutWhere)
{
	EXPECT_EQ(OutageCause("connect: Connection refused"), "Connection refused");
	EXPECT_EQ(OutageCause("redis cluster: master 127.0.0.1:7001: connect: TLS: server certificate verify failed: "
	                      "certificate has expired"),
	          "certificate has expired");
	EXPECT_EQ(OutageCause("LOADING Redis is loading the dataset in memory"), "LOADING Redis is loading the dataset in memory");
}

TEST(OutageCauses, EachCauseOncePerOutage)
{
	OutageCauses c;
	EXPECT_TRUE(c.Note("read: Server closed the connection"));
	EXPECT_TRUE(c.Note("master 127.0.0.1:7002: connect: TLS: certificate has expired"));
	EXPECT_FALSE(c.Note("master 127.0.0.1:7003: connect: TLS: certificate has expired")); // elsewhere: no new cause
	EXPECT_FALSE(c.Note("read: Server closed the connection"));                           // again, in turn
	c.Clear();
	EXPECT_TRUE(c.Note("read: Server closed the connection")); // a new outage
}

TEST(OutageCauses, Bounded)
{
	OutageCauses c;
	for (size_t i = 0; i < OutageCauses::kMax; i++)
		EXPECT_TRUE(c.Note("cause " + std::to_string(i)));
	EXPECT_FALSE(c.Note("one cause too many"));
}
