// daemon/src/metrics/core/daemon_metrics.hpp - the daemon's own figures for /metrics and /healthz: its
// consumer's work, its partitions, and whether its servers are up.
//
// They live below both the consumer and the gateway because the consumer and net count them and the
// gateway prints them (consumer and gateway never see each other). The gateway's and the bus's
// counters are their areas' own (gateway/hub/hub.hpp, bus/core/bus_metrics.hpp). Every series is written
// with common/process/prometheus_text.hpp, the one writer of Prometheus text (chat-outbox-relay's too).
//
// Single-threaded (the libuv loop), so plain integers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/process/prometheus_text.hpp"
#include "metrics/core/lag_buckets.hpp"

namespace chat_outboxd {

struct Metrics {
	uint64_t jobs_processed = 0;     // completed by this daemon
	uint64_t messages_delivered = 0; // new inbox rows pushed to the gateway
	uint64_t duplicates_skipped = 0; // jobs whose message id was already in the inbox
	uint64_t jobs_failed = 0;        // moved to the failed set (poison)
	uint64_t stalled_recovered = 0;  // jobs requeued by our stalled check
	bool redis_up = false;
	bool postgres_up = false;
	bool redis_durable = true; // false while a shard runs without AOF or may evict (warned once)
	// Redis's appendfsync (always, everysec, no): how much an AOF can lose on a crash. Empty until
	// read, and when CONFIG GET is refused.
	std::string redis_appendfsync;
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
	chat_outbox::Histogram batch_size{{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}};
	chat_outbox::Histogram lag_seconds{LagBuckets()};

	// The series, in the order /metrics prints them, with the gateway's and the bus's between them:
	// RenderJobs (the consumer's counters), RenderServers, RenderPartitions (and the consumer's
	// histograms).
	void RenderJobs(std::string *out) const;
	void RenderServers(std::string *out) const;
	void RenderPartitions(std::string *out) const;
	// PartitionsJson: partition_leases as /healthz prints them,
	// [{"partition":0,"queue":"q-p0","lease":"held"},...].
	std::string PartitionsJson() const;
};

// Reconnects: the Redis and Postgres connections of this process that had worked, were lost and work
// again (net/hiredis_link.cpp and net/pg_client.cpp count them; RenderServers prints them). One pair for
// the process, not a field of Metrics: every connection counts, most are made far from the Metrics (per
// partition, per shard), and a daemon is one process on one loop thread.
struct ReconnectCounts {
	uint64_t redis = 0;
	uint64_t postgres = 0;
};
ReconnectCounts &Reconnects();

} // namespace chat_outboxd
