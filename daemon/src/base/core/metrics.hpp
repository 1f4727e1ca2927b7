// daemon/src/base/core/metrics.hpp - the pieces every area writes its /metrics series with (Prometheus
// text, format 0.0.4); each area keeps its own counters.
//
// Single-threaded (the libuv loop), so plain integers. Histograms use fixed buckets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chat_outboxd {

class Histogram {
  public:
	explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
	void Observe(double v);
	// Render appends the Prometheus lines for a histogram named `name`.
	void Render(const std::string &name, const std::string &help, std::string *out) const;

  private:
	std::vector<double> bounds_;
	std::vector<uint64_t> counts_;
	double sum_ = 0;
	uint64_t count_ = 0;
};

// MetricHeader appends a series' "# HELP" and "# TYPE" lines (type: counter, gauge or histogram); its
// samples follow. Every series of /metrics starts with it.
void MetricHeader(std::string *out, std::string_view name, std::string_view help, std::string_view type);

// MetricSample appends a series with one unlabelled sample: its header and "<name> <v>" (%.17g).
void MetricSample(std::string *out, std::string_view name, std::string_view help, std::string_view type, double v);

// MetricLabelValue escapes a label value as the text format asks: backslash, double quote, newline.
std::string MetricLabelValue(const std::string &v);

// LagBuckets: the bounds, in seconds, of every latency histogram.
inline std::vector<double>
LagBuckets()
{
	return {0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

} // namespace chat_outboxd
