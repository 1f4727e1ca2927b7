// tests/unit/common/outbox_metrics_test.cpp - the outbox's series as the relay and the daemon print them.
#include "common/process/outbox_metrics.hpp"

#include <gtest/gtest.h>

using namespace chat_outbox;

TEST(OutboxMetrics, StateSetMarksTheCurrentStateAndKeepsAnUnknownOne)
{
	std::string out;
	RenderStateSet(&out, "s", "S.", {"running", "stopped"}, "stopped");
	EXPECT_EQ(out, "# HELP s S.\n# TYPE s gauge\ns{state=\"running\"} 0\ns{state=\"stopped\"} 1\n");
	out.clear();
	RenderStateSet(&out, "s", "S.", {"running"}, "something new");
	EXPECT_NE(out.find("s{state=\"running\"} 0\ns{state=\"something new\"} 1\n"), std::string::npos) << out;
}

TEST(OutboxMetrics, BacklogPerPartition)
{
	std::string out;
	RenderBacklog({{"workers", 3, "chat-replies-p3", 12, 0.75}}, &out);
	EXPECT_NE(out.find("\nchat_outbox_unsent{service=\"workers\",partition=\"3\",queue=\"chat-replies-p3\"} 12\n"),
	          std::string::npos)
	    << out;
	EXPECT_NE(out.find("\nchat_outbox_oldest_unsent_seconds{service=\"workers\",partition=\"3\",queue=\"chat-replies-p3\"} 0.75\n"),
	          std::string::npos);
	EXPECT_NE(out.find("# TYPE chat_outbox_oldest_unsent_seconds gauge\n"), std::string::npos);
}
