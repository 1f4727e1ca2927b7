/*
 * extension/src/pg/sink_ops.hpp - the two kinds of broker the relay's sink (redis_sink.hpp) writes to,
 * one table of operations each, chosen once per value of chat_outbox.redis_url (redis_sink.cpp,
 * ParseShards):
 *   shards  (redis_sink.cpp): a list of Redis servers (or Sentinel-watched masters), one non-blocking
 *           connection each, waited on the latch;
 *   cluster (cluster_sink.cpp): a Redis Cluster (redis-cluster://), through the relays' shared
 *           ClusterRouter (common/relay/cluster_router.hpp).
 * Each entry has the contract of the RedisSink function of the same name (redis_sink.hpp); the public
 * functions only forward to the table in use. Also here: what both kinds share about a batch's jobs.
 */
#pragma once

#include "pg/redis_sink.hpp"

#include <string>
#include <vector>

#include "common/redis_url.hpp"
#include "common/relay/bullmq_batch_add.hpp"
#include "common/relay/job_id.hpp"

typedef struct SinkOps
{
	bool (*ensure_connected)(SinkFailure *failure);
	bool (*send)(int shard, const char *service, const char *queue, int partitions, const LayoutKeyValue *layout,
				 const SinkCall *calls, int ncalls, const OutboxRow *rows, SinkFailure *failure);
	bool (*await)(int shard, int *created, List **refusals, SinkFailure *failure);
	bool (*wait_replicas)(int shard, int replicas, SinkFailure *failure);
	bool (*get_layout)(const char *queue, int *layout, LayoutKeyValue *raw, SinkFailure *failure);
	bool (*set_layout)(const char *queue, int partitions, SinkFailure *failure);
	bool (*count_jobs)(const char *queue, int partitions, int64 *jobs, SinkFailure *failure);
	int64 (*connects)(void);
	bool (*get_mark)(int shard, const char *queue, int partitions, int partition, char **mark, SinkFailure *failure);
	void (*disconnect)(void);
	const char *(*warning)(void);
	const char *(*appendfsync)(void);
	bool (*awaiting_promotion)(void);
	bool (*promoted)(void);
	bool batch_checks_layout; /* every batch call checks the layout key (RedisSinkBatchChecksLayout) */
} SinkOps;

extern const SinkOps cluster_sink_ops;

/*
 * ClusterSinkUse: the cluster the sink writes to from now on (a redis-cluster:// URL), its connections
 * dropped. C++: call it inside CallCpp (redis_sink.cpp's ParseShards does).
 */
void ClusterSinkUse(const chat_outbox::RedisUrl &url);

/*
 * SinkLayoutCheck: what a batch call on the layout key's shard expects the key to hold (NULL or
 * LAYOUT_KEY_UNKNOWN: no check). SinkJobs: the jobs of rows[0..n), ids chosen by ChooseJobId; *jobs
 * points into *ids. C++: inside CallCpp.
 */
static inline chat_outbox::LayoutCheck
SinkLayoutCheck(const std::string &queue, const LayoutKeyValue *layout)
{
	chat_outbox::LayoutCheck check{queue};

	if (layout && layout->state == LAYOUT_KEY_ABSENT)
		check.expect = chat_outbox::LayoutExpect::kAbsent;
	else if (layout && layout->state == LAYOUT_KEY_HOLDS) {
		check.expect = chat_outbox::LayoutExpect::kHolds;
		check.value = layout->value;
	}
	return check;
}

/* SinkMarkStep: a call's mark step (redis_sink.hpp, SinkCall). C++: inside CallCpp. */
static inline chat_outbox::MarkStep
SinkMarkStep(const SinkCall &call)
{
	return chat_outbox::MarkStep{call.mark_expect ? std::string_view(call.mark_expect) : chat_outbox::kAnyMark,
								 call.mark_next ? std::string_view(call.mark_next) : std::string_view()};
}

static inline void
SinkJobs(const OutboxRow *r, int n, const char *service, std::vector<std::string> *ids,
		 std::vector<chat_outbox::JobSpec> *jobs)
{
	ids->clear();
	jobs->clear();
	ids->reserve(n);
	for (int i = 0; i < n; i++)
		ids->push_back(chat_outbox::ChooseJobId(r[i].payload_id, service, r[i].id));
	for (int i = 0; i < n; i++)
		jobs->push_back({(*ids)[i], std::string_view(r[i].event, r[i].event_len),
						 std::string_view(r[i].payload, r[i].payload_len)});
}
