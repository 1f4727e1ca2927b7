// daemon/src/base/core/metrics.cpp - Prometheus text exposition (format 0.0.4).
#include "base/core/metrics.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

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
	MetricHeader(out, name, help, type);
	*out += std::string(name) + " " + Num(v) + "\n";
}

// LabelValue escapes a label value as the text format asks: backslash, double quote, newline.
std::string
LabelValue(const std::string &v)
{
	std::string out;
	for (char c : v) {
		if (c == '\\' || c == '"')
			out.push_back('\\');
		if (c == '\n') {
			out += "\\n";
			continue;
		}
		out.push_back(c);
	}
	return out;
}

} // namespace

void
MetricHeader(std::string *out, std::string_view name, std::string_view help, std::string_view type)
{
	*out += "# HELP ";
	*out += name;
	*out += ' ';
	*out += help;
	*out += "\n# TYPE ";
	*out += name;
	*out += ' ';
	*out += type;
	*out += '\n';
}

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
	MetricHeader(out, name, help, "histogram");
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
	Counter(&out, "chat_outboxd_postgres_up", "1 when the gateway's Postgres connection is up.", "gauge",
	        postgres_up ? 1 : 0);
	Counter(&out, "chat_outboxd_redis_durable", "0 when a Redis shard it uses runs without appendonly or may evict jobs.", "gauge",
	        redis_durable ? 1 : 0);
	MetricHeader(&out, "chat_outboxd_redis_appendfsync", "Redis's appendfsync setting, as the label (unknown: not read).",
	             "gauge");
	out += "chat_outboxd_redis_appendfsync{setting=\"" +
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
	Counter(&out, "chat_outboxd_partitions", "Partitions of the service's queue (its layout key; 0 = not read yet).",
	        "gauge", static_cast<uint64_t>(partitions));
	Counter(&out, "chat_outboxd_leases_acquired_total", "Partition leases this daemon acquired.", "counter",
	        leases_acquired);
	Counter(&out, "chat_outboxd_leases_lost_total", "Partition leases this daemon lost (not released by it).",
	        "counter", leases_lost);
	MetricHeader(&out, "chat_outboxd_partition_owned", "1 for a partition this daemon works (lease held or draining).",
	             "gauge");
	for (const auto &p : partition_leases) {
		std::string state = p.lease;
		out += "chat_outboxd_partition_owned{partition=\"" + std::to_string(p.partition) + "\",queue=\"" +
		       LabelValue(p.queue) + "\"} " + (state == "held" || state == "draining" ? "1" : "0") + "\n";
	}
	MetricHeader(&out, "chat_outboxd_partition_lease",
	             "The lease state, as the label, of each partition this daemon is assigned or still holds.", "gauge");
	for (const auto &p : partition_leases)
		out += "chat_outboxd_partition_lease{partition=\"" + std::to_string(p.partition) + "\",queue=\"" +
		       LabelValue(p.queue) + "\",state=\"" + p.lease + "\"} 1\n";
	MetricHeader(&out, "chat_outboxd_partition_waiting_jobs",
	             "Jobs in the wait list of each partition this daemon holds, read at its last lease tick (the "
	             "partition's backlog in Redis).",
	             "gauge");
	for (const auto &p : partition_leases)
		if (p.waiting >= 0)
			out += "chat_outboxd_partition_waiting_jobs{partition=\"" + std::to_string(p.partition) + "\",queue=\"" +
			       LabelValue(p.queue) + "\"} " + std::to_string(p.waiting) + "\n";
	batch_size.Render("chat_outboxd_batch_size", "Jobs per fetched batch.", &out);
	lag_seconds.Render("chat_outboxd_lag_seconds", "Message creation to push to clients.", &out);
	return out;
}

std::string
Metrics::PartitionsJson() const
{
	nlohmann::ordered_json out = nlohmann::ordered_json::array();
	for (const auto &p : partition_leases)
		out.push_back({{"partition", p.partition}, {"queue", p.queue}, {"lease", p.lease}});
	return out.dump();
}

} // namespace chat_outboxd
