// daemon/src/bus/core/bus_metrics.cpp - see bus_metrics.hpp.
#include "bus/core/bus_metrics.hpp"

namespace chat_outboxd {

using chat_outbox::MetricSample;

void
BusMetrics::Render(std::string *out) const
{
	MetricSample(out, "chat_outboxd_bus_published_total", "Bus messages published by this daemon's consumer.", "counter",
	             published);
	MetricSample(out, "chat_outboxd_bus_publish_failed_total", "Bus messages whose PUBLISH failed.", "counter",
	             publish_failed);
	MetricSample(out, "chat_outboxd_bus_received_total", "Bus messages received by this gateway.", "counter",
	             received);
	MetricSample(out, "chat_outboxd_bus_malformed_total", "Bus messages this gateway could not read.", "counter",
	             malformed);
	MetricSample(out, "chat_outboxd_bus_fills_total", "Inbox reads by this gateway to fill a gap in the bus.", "counter",
	             fills);
	MetricSample(out, "chat_outboxd_bus_fill_rows_total", "Rows handed on from those reads.", "counter", fill_rows);
	MetricSample(out, "chat_outboxd_bus_buffer_overflows_total", "Gaps whose buffered rows passed the bound.", "counter",
	             buffer_overflows);
	MetricSample(out, "chat_outboxd_bus_subscribed", "1 while this gateway's bus subscription is confirmed.", "gauge",
	             subscribed ? 1 : 0);
	lag_seconds.Render("chat_outboxd_bus_lag_seconds", "Bus message publish to receipt by this gateway.", out);
}

} // namespace chat_outboxd
