// daemon/src/metrics/core/lag_buckets.hpp - the bucket bounds of the daemon's latency histograms (the
// consumer's lag and the bus's), so every latency series of /metrics is read on the same scale.
#pragma once

#include <vector>

namespace chat_outboxd {

// LagBuckets: the bounds, in seconds, of every latency histogram.
inline std::vector<double>
LagBuckets()
{
	return {0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

} // namespace chat_outboxd
