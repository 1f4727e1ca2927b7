// tests/unit/common/prometheus_text_test.cpp - the Prometheus text writer both programs' /metrics use.
#include "common/process/prometheus_text.hpp"

#include <gtest/gtest.h>

using namespace chat_outbox;

TEST(PrometheusText, HeaderSampleAndLabelledLine)
{
	std::string out;
	MetricSample(&out, "x_total", "Things.", "counter", 3);
	EXPECT_EQ(out, "# HELP x_total Things.\n# TYPE x_total counter\nx_total 3\n");
	out.clear();
	MetricLine(&out, "y", {{"a", "1"}, {"b", "q\"u\\o\nte"}}, 0.5);
	EXPECT_EQ(out, "y{a=\"1\",b=\"q\\\"u\\\\o\\nte\"} 0.5\n");
	out.clear();
	MetricLine(&out, "z", {}, 2);
	EXPECT_EQ(out, "z 2\n");
}

TEST(PrometheusText, HistogramIsCumulative)
{
	Histogram h({1, 10});
	h.Observe(0.5);
	h.Observe(5);
	h.Observe(50);
	std::string out;
	h.Render("h", "H.", &out);
	EXPECT_NE(out.find("h_bucket{le=\"1\"} 1\nh_bucket{le=\"10\"} 2\nh_bucket{le=\"+Inf\"} 3\nh_sum 55.5\nh_count 3\n"),
	          std::string::npos)
	    << out;
}
