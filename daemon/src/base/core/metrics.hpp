// daemon/src/base/core/metrics.hpp - the Prometheus text writer every area writes its /metrics series with
// (common/prometheus_text.hpp, shared with chat-outbox-relay), under the daemon's namespace, and the
// buckets of the daemon's latency histograms. Each area keeps its own counters.
//
// Single-threaded (the libuv loop), so plain integers.
#pragma once

#include <vector>

#include "common/prometheus_text.hpp"

namespace chat_outboxd {

using chat_outbox::Histogram;
using chat_outbox::MetricHeader;
using chat_outbox::MetricLabelValue;
using chat_outbox::MetricSample;

// LagBuckets: the bounds, in seconds, of every latency histogram.
inline std::vector<double>
LagBuckets()
{
	return {0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

} // namespace chat_outboxd
