// daemon/src/base/core/metrics.cpp - Prometheus text exposition (format 0.0.4).
#include "base/core/metrics.hpp"

#include <cstdio>

namespace chat_outboxd {

namespace {

std::string
Num(double v)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.17g", v);
	return buf;
}

void
Counter(std::string *out, const char *name, const char *help, const char *type, double v)
{
	*out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + Num(v) +
	        "\n";
}

} // namespace

void
Histogram::Observe(double v)
{
	size_t i = 0;
	while (i < bounds_.size() && v > bounds_[i])
		i++;
	counts_[i]++;
	sum_ += v;
	count_++;
}

void
Histogram::Render(const std::string &name, const std::string &help, std::string *out) const
{
	*out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
	uint64_t cumulative = 0;
	for (size_t i = 0; i < bounds_.size(); i++) {
		cumulative += counts_[i];
		*out += name + "_bucket{le=\"" + Num(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
	}
	*out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
	*out += name + "_sum " + Num(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

std::string
Metrics::RenderPrometheus() const
{
	std::string out;
	Counter(&out, "chat_outboxd_jobs_processed_total", "Jobs completed by this daemon.", "counter", jobs_processed);
	Counter(&out, "chat_outboxd_messages_delivered_total", "New messages pushed to clients.", "counter",
	        messages_delivered);
	Counter(&out, "chat_outboxd_duplicates_skipped_total", "Jobs whose message was already in the inbox.", "counter",
	        duplicates_skipped);
	Counter(&out, "chat_outboxd_jobs_failed_total", "Jobs moved to the failed set.", "counter", jobs_failed);
	Counter(&out, "chat_outboxd_stalled_recovered_total", "Stalled jobs requeued by this daemon.", "counter",
	        stalled_recovered);
	Counter(&out, "chat_outboxd_frames_rejected_total", "Malformed or oversized client frames.", "counter",
	        frames_rejected);
	Counter(&out, "chat_outboxd_clients_connected", "Connected clients.", "gauge", clients_connected);
	Counter(&out, "chat_outboxd_redis_up", "1 when the Redis connections are up.", "gauge", redis_up ? 1 : 0);
	Counter(&out, "chat_outboxd_postgres_up", "1 when the Postgres connection is up.", "gauge", postgres_up ? 1 : 0);
	Counter(&out, "chat_outboxd_redis_durable", "0 when Redis runs without appendonly or may evict jobs.", "gauge",
	        redis_durable ? 1 : 0);
	out += "# HELP chat_outboxd_redis_appendfsync Redis's appendfsync setting, as the label (unknown: not read).\n"
	       "# TYPE chat_outboxd_redis_appendfsync gauge\n"
	       "chat_outboxd_redis_appendfsync{setting=\"" +
	       (redis_appendfsync.empty() ? std::string("unknown") : redis_appendfsync) + "\"} 1\n";
	Counter(&out, "chat_outboxd_bus_published_total", "Bus messages published by this daemon's consumer.", "counter",
	        bus_published);
	Counter(&out, "chat_outboxd_bus_publish_failed_total", "Bus messages whose PUBLISH failed.", "counter",
	        bus_publish_failed);
	Counter(&out, "chat_outboxd_bus_received_total", "Bus messages received by this gateway.", "counter",
	        bus_received);
	Counter(&out, "chat_outboxd_bus_malformed_total", "Bus messages this gateway could not read.", "counter",
	        bus_malformed);
	Counter(&out, "chat_outboxd_bus_fills_total", "Inbox reads by this gateway to fill a gap in the bus.", "counter",
	        bus_fills);
	Counter(&out, "chat_outboxd_bus_fill_rows_total", "Rows handed on from those reads.", "counter", bus_fill_rows);
	Counter(&out, "chat_outboxd_bus_buffer_overflows_total", "Gaps whose buffered rows passed the bound.", "counter",
	        bus_buffer_overflows);
	Counter(&out, "chat_outboxd_bus_subscribed", "1 while this gateway's bus subscription is confirmed.", "gauge",
	        bus_subscribed ? 1 : 0);
	bus_lag_seconds.Render("chat_outboxd_bus_lag_seconds", "Bus message publish to receipt by this gateway.", &out);
	batch_size.Render("chat_outboxd_batch_size", "Jobs per fetched batch.", &out);
	lag_seconds.Render("chat_outboxd_lag_seconds", "Message creation to push to clients.", &out);
	return out;
}

} // namespace chat_outboxd
