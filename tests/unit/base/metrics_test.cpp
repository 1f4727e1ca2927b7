// tests/unit/base/metrics_test.cpp - the Prometheus text of the daemon's own metrics.
#include "base/core/metrics.hpp"

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

} // namespace

TEST(Metrics, AppendfsyncIsOneSampleLabelledWithTheSetting)
{
	Metrics m;
	std::string before = m.RenderPrometheus();
	EXPECT_NE(before.find("\nchat_outboxd_redis_appendfsync{setting=\"unknown\"} 1\n"), std::string::npos) << before;
	m.redis_appendfsync = "always";
	std::string after = m.RenderPrometheus();
	EXPECT_NE(after.find("\nchat_outboxd_redis_appendfsync{setting=\"always\"} 1\n"), std::string::npos) << after;
	EXPECT_EQ(Count(after, "\nchat_outboxd_redis_appendfsync{"), 1);
	EXPECT_EQ(Count(after, "# TYPE chat_outboxd_redis_appendfsync gauge\n"), 1);
}
