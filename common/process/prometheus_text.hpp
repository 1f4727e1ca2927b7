// common/process/prometheus_text.hpp - Prometheus text exposition (format 0.0.4): the pieces chat-outboxd's and
// chat-outbox-relay's /metrics write their series with; each program keeps its own figures.
//
// Not thread-safe: a Histogram belongs to the one thread that observes and renders it. Histograms use
// fixed buckets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chat_outbox {

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

// MetricLabel is one label of a sample: name and (unescaped) value.
using MetricLabel = std::pair<std::string_view, std::string>;

// MetricLine appends one sample of a series whose header was written: `name{k="v",...} v` (%.17g), the
// values escaped; without labels, `name v`.
void MetricLine(std::string *out, std::string_view name, const std::vector<MetricLabel> &labels, double v);

} // namespace chat_outbox
