// tests/unit/metrics/daemon_metrics_test.cpp - the Prometheus text of the daemon's own metrics.
#include "metrics/core/daemon_metrics.hpp"

#include <gtest/gtest.h>

using chat_outboxd::Metrics;

namespace {

int
Count(const std::string &text, const std::string &what)
{
	int n = 0;
	for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
		n++;
	return n;
}

std::string
Render(const Metrics &m)
{
	std::string out;
	m.RenderJobs(&out);
	m.RenderServers(&out);
	m.RenderPartitions(&out);
	return out;
}

} // namespace

TEST(Metrics, AppendfsyncIsOneSampleLabelledWithTheSetting)
{
	Metrics m;
	std::string before = Render(m);
	EXPECT_NE(before.find("\nchat_outboxd_redis_appendfsync{setting=\"unknown\"} 1\n"), std::string::npos) << before;
	m.redis_appendfsync = "always";
	std::string after = Render(m);
	EXPECT_NE(after.find("\nchat_outboxd_redis_appendfsync{setting=\"always\"} 1\n"), std::string::npos) << after;
	EXPECT_EQ(Count(after, "\nchat_outboxd_redis_appendfsync{"), 1);
	EXPECT_EQ(Count(after, "# TYPE chat_outboxd_redis_appendfsync gauge\n"), 1);
}

TEST(Metrics, PartitionsOwnedAndLeaseStates)
{
	Metrics m;
	m.partitions = 4;
	m.partition_leases = {{0, "q-p0", "held"}, {2, "q-p2", "draining"}, {3, "q\"-p3", "acquiring"}};
	std::string text = Render(m);
	EXPECT_NE(text.find("\nchat_outboxd_partitions 4\n"), std::string::npos) << text;
	EXPECT_NE(text.find("\nchat_outboxd_partition_owned{partition=\"0\",queue=\"q-p0\"} 1\n"), std::string::npos);
	EXPECT_NE(text.find("\nchat_outboxd_partition_owned{partition=\"2\",queue=\"q-p2\"} 1\n"), std::string::npos);
	// a label value is escaped as the text format asks
	EXPECT_NE(text.find("\nchat_outboxd_partition_owned{partition=\"3\",queue=\"q\\\"-p3\"} 0\n"), std::string::npos);
	EXPECT_NE(text.find("\nchat_outboxd_partition_lease{partition=\"2\",queue=\"q-p2\",state=\"draining\"} 1\n"),
	          std::string::npos);
	EXPECT_EQ(Count(text, "# TYPE chat_outboxd_partition_lease gauge\n"), 1);
	// waiting jobs only where they were counted
	EXPECT_EQ(Count(text, "\nchat_outboxd_partition_waiting_jobs{"), 0);
	m.partition_leases[0].waiting = 17;
	text = Render(m);
	EXPECT_NE(text.find("\nchat_outboxd_partition_waiting_jobs{partition=\"0\",queue=\"q-p0\"} 17\n"), std::string::npos);
	EXPECT_EQ(Count(text, "\nchat_outboxd_partition_waiting_jobs{"), 1);
	EXPECT_EQ(m.PartitionsJson(), R"([{"partition":0,"queue":"q-p0","lease":"held"},)"
	                              R"({"partition":2,"queue":"q-p2","lease":"draining"},)"
	                              R"({"partition":3,"queue":"q\"-p3","lease":"acquiring"}])");
	EXPECT_EQ(Metrics().PartitionsJson(), "[]");
}

TEST(Metrics, ReconnectCountersAreTheProcessWideCounts)
{
	chat_outboxd::ReconnectCounts saved = chat_outboxd::Reconnects();
	chat_outboxd::Reconnects() = {3, 1};
	std::string text = Render(Metrics());
	EXPECT_NE(text.find("# TYPE chat_outboxd_redis_reconnects_total counter\nchat_outboxd_redis_reconnects_total 3\n"),
	          std::string::npos)
	    << text;
	EXPECT_NE(text.find("# TYPE chat_outboxd_postgres_reconnects_total counter\nchat_outboxd_postgres_reconnects_total 1\n"),
	          std::string::npos)
	    << text;
	chat_outboxd::Reconnects() = saved;
}
