// daemon/src/bus/core/bus_metrics.hpp - the bus's counters (docs/architecture.md, "The bus"): what
// this daemon's consumer published, what its gateway received and read from the inbox to fill gaps.
// Both sides count into one BusMetrics, so /metrics shows the bus as one series group.
#pragma once

#include <cstdint>
#include <string>

#include "common/process/prometheus_text.hpp"
#include "metrics/core/lag_buckets.hpp"

namespace chat_outboxd {

struct BusMetrics {
	uint64_t published = 0;        // PUBLISH commands answered
	uint64_t publish_failed = 0;   // PUBLISH commands that failed (the gateways fill from the inbox)
	uint64_t received = 0;         // bus messages received
	uint64_t malformed = 0;        // bus messages that were not ours (ignored; the inbox is read)
	uint64_t fills = 0;            // inbox reads that filled a gap
	uint64_t fill_rows = 0;        // rows those reads handed on
	uint64_t buffer_overflows = 0; // gaps whose buffered rows passed the bound (read again)
	bool subscribed = false;
	chat_outbox::Histogram lag_seconds{LagBuckets()};

	// Render appends the chat_outboxd_bus_* series.
	void Render(std::string *out) const;
};

} // namespace chat_outboxd
