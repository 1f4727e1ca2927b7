// daemon/src/metrics/core/daemon_metrics.cpp - see daemon_metrics.hpp.
#include "metrics/core/daemon_metrics.hpp"

#include <nlohmann/json.hpp>

namespace chat_outboxd {

using chat_outbox::MetricHeader;
using chat_outbox::MetricLabelValue;
using chat_outbox::MetricSample;

ReconnectCounts &
Reconnects()
{
	static ReconnectCounts counts;
	return counts;
}

void
Metrics::RenderJobs(std::string *out) const
{
	MetricSample(out, "chat_outboxd_jobs_processed_total", "Jobs completed by this daemon.", "counter", jobs_processed);
	MetricSample(out, "chat_outboxd_messages_delivered_total", "New messages pushed to clients.", "counter",
	             messages_delivered);
	MetricSample(out, "chat_outboxd_duplicates_skipped_total", "Jobs whose message was already in the inbox.", "counter",
	             duplicates_skipped);
	MetricSample(out, "chat_outboxd_jobs_failed_total", "Jobs moved to the failed set.", "counter", jobs_failed);
	MetricSample(out, "chat_outboxd_stalled_recovered_total", "Stalled jobs requeued by this daemon.", "counter",
	             stalled_recovered);
}

void
Metrics::RenderServers(std::string *out) const
{
	MetricSample(out, "chat_outboxd_redis_up", "1 when the Redis connections are up.", "gauge", redis_up ? 1 : 0);
	MetricSample(out, "chat_outboxd_postgres_up", "1 when the gateway's Postgres connection is up.", "gauge",
	             postgres_up ? 1 : 0);
	MetricSample(out, "chat_outboxd_redis_reconnects_total",
	             "Redis connections (commands, pub/sub, every partition's and shard's) that were lost and came back.",
	             "counter", Reconnects().redis);
	MetricSample(out, "chat_outboxd_postgres_reconnects_total",
	             "Postgres connections (the gateway's, every partition's) that were lost and came back.", "counter",
	             Reconnects().postgres);
	MetricSample(out, "chat_outboxd_redis_durable", "0 when a Redis shard it uses runs without appendonly or may evict jobs.", "gauge",
	             redis_durable ? 1 : 0);
	MetricHeader(out, "chat_outboxd_redis_appendfsync", "Redis's appendfsync setting, as the label (unknown: not read).",
	             "gauge");
	*out += "chat_outboxd_redis_appendfsync{setting=\"" +
	        (redis_appendfsync.empty() ? std::string("unknown") : redis_appendfsync) + "\"} 1\n";
}

void
Metrics::RenderPartitions(std::string *out) const
{
	MetricSample(out, "chat_outboxd_partitions", "Partitions of the service's queue (its layout key; 0 = not read yet).",
	             "gauge", static_cast<uint64_t>(partitions));
	MetricSample(out, "chat_outboxd_leases_acquired_total", "Partition leases this daemon acquired.", "counter",
	             leases_acquired);
	MetricSample(out, "chat_outboxd_leases_lost_total", "Partition leases this daemon lost (not released by it).",
	             "counter", leases_lost);
	MetricHeader(out, "chat_outboxd_partition_owned", "1 for a partition this daemon works (lease held or draining).",
	             "gauge");
	for (const auto &p : partition_leases) {
		std::string state = p.lease;
		*out += "chat_outboxd_partition_owned{partition=\"" + std::to_string(p.partition) + "\",queue=\"" +
		        MetricLabelValue(p.queue) + "\"} " + (state == "held" || state == "draining" ? "1" : "0") + "\n";
	}
	MetricHeader(out, "chat_outboxd_partition_lease",
	             "The lease state, as the label, of each partition this daemon is assigned or still holds.", "gauge");
	for (const auto &p : partition_leases)
		*out += "chat_outboxd_partition_lease{partition=\"" + std::to_string(p.partition) + "\",queue=\"" +
		        MetricLabelValue(p.queue) + "\",state=\"" + p.lease + "\"} 1\n";
	MetricHeader(out, "chat_outboxd_partition_waiting_jobs",
	             "Jobs in the wait list of each partition this daemon holds, read at its last lease tick (the "
	             "partition's backlog in Redis).",
	             "gauge");
	for (const auto &p : partition_leases)
		if (p.waiting >= 0)
			*out += "chat_outboxd_partition_waiting_jobs{partition=\"" + std::to_string(p.partition) + "\",queue=\"" +
			        MetricLabelValue(p.queue) + "\"} " + std::to_string(p.waiting) + "\n";
	batch_size.Render("chat_outboxd_batch_size", "Jobs per fetched batch.", out);
	lag_seconds.Render("chat_outboxd_lag_seconds", "Message creation to push to clients.", out);
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
