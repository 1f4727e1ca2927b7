// tests/unit/base/log_test.cpp - StateLog: a component's outage logged when it starts and once per new
// cause, its recovery once.
#include <gtest/gtest.h>

#include "base/log.hpp"

using chat_outboxd::StateLog;

TEST(StateLog, OutageOncePerCause)
{
	StateLog log("redis");
	EXPECT_TRUE(log.Down("127.0.0.1:7001: Server closed the connection"));                   // the outage starts
	EXPECT_FALSE(log.Down("127.0.0.1:7002: Server closed the connection"));                  // another connection, same cause
	EXPECT_TRUE(log.Down("TLS: server certificate verify failed: certificate has expired")); // its reconnects' cause
	EXPECT_FALSE(log.Down("TLS: server certificate verify failed: certificate has expired"));
	EXPECT_FALSE(log.Down("127.0.0.1:7001: Server closed the connection")); // in turn: still one line each
	EXPECT_TRUE(log.IsDown());
	log.Up();
	EXPECT_FALSE(log.IsDown());
	EXPECT_TRUE(log.Down("127.0.0.1:7001: Server closed the connection")); // a new outage
}
