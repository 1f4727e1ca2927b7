// daemon/src/base/core/metrics.hpp - counters for /metrics (Prometheus text) and /healthz.
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

// LagBuckets: the bounds, in seconds, of every latency histogram.
inline std::vector<double>
LagBuckets()
{
	return {0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

struct Metrics {
	uint64_t jobs_processed = 0;     // completed by this daemon
	uint64_t messages_delivered = 0; // new inbox rows pushed to the gateway
	uint64_t duplicates_skipped = 0; // jobs whose message id was already in the inbox
	uint64_t jobs_failed = 0;        // moved to the failed set (poison)
	uint64_t stalled_recovered = 0;  // jobs requeued by our stalled check
	uint64_t frames_rejected = 0;    // malformed/oversized client frames (connection closed)
	int64_t clients_connected = 0;   // gauge
	bool redis_up = false;
	bool postgres_up = false;
	bool redis_durable = true;       // false while a shard runs without AOF or may evict (warned once)
	// Redis's appendfsync (always, everysec, no): how much an AOF can lose on a crash. Empty until
	// read, and when CONFIG GET is refused.
	std::string redis_appendfsync;
	// The bus (docs/architecture.md, "The bus"): what this daemon published, what its gateway received
	// and read from the inbox to fill gaps.
	uint64_t bus_published = 0;      // PUBLISH commands answered
	uint64_t bus_publish_failed = 0; // PUBLISH commands that failed (the gateways fill from the inbox)
	uint64_t bus_received = 0;       // bus messages received
	uint64_t bus_malformed = 0;      // bus messages that were not ours (ignored; the inbox is read)
	uint64_t bus_fills = 0;          // inbox reads that filled a gap
	uint64_t bus_fill_rows = 0;      // rows those reads handed on
	uint64_t bus_buffer_overflows = 0; // gaps whose buffered rows passed the bound (read again)
	bool bus_subscribed = false;
	Histogram bus_lag_seconds{LagBuckets()};
	// Partitions (consumer/partition_manager.hpp): the service's count as the layout key says, and
	// the lease of every partition this daemon is assigned or still holds.
	struct PartitionLease {
		int64_t partition = 0;
		std::string queue;
		const char *lease = ""; // LeaseStateName
		int64_t waiting = -1;   // jobs in the partition's wait list at the last lease tick; -1: not read
	};
	int64_t partitions = 0; // 0 until the layout is first read
	std::vector<PartitionLease> partition_leases;
	uint64_t leases_acquired = 0;
	uint64_t leases_lost = 0;
	Histogram batch_size{{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}};
	Histogram lag_seconds{LagBuckets()};

	std::string RenderPrometheus() const;
	// PartitionsJson: partition_leases as /healthz prints them,
	// [{"partition":0,"queue":"q-p0","lease":"held"},...].
	std::string PartitionsJson() const;
};

} // namespace chat_outboxd
