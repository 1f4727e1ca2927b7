/*
 * extension/src/pg/cluster_sink.cpp - the relay's sink on a Redis Cluster (chat_outbox.redis_url =
 * 'redis-cluster://host:port[,host:port...]'): the cluster's entry of sink_ops.hpp.
 *
 * The cluster is the relay's one shard (RedisSinkShards() is 1; a failure is every service's, as with
 * one Redis). Every call goes through the ClusterRouter both relays share (common/relay/cluster_router.hpp:
 * the slot map, MOVED and ASK followed, the map read again after a failure, WAIT on every master a
 * pass wrote to), so the extension and chat-outbox-relay route alike. Each service's queues are named
 * in their cluster form (ClusterQueueName, common/redis_cluster.hpp): partition p's "{<queue>-p<p>}",
 * a hash slot each, so a batch is one script on one master. The layout key "{<queue>}"'s slot is
 * checked by the unpartitioned queue's calls only, so a pass reads it every time (ChooseLayout in
 * relay_pass.cpp, through RedisSinkBatchChecksLayout).
 *
 * The router's connections are blocking (common/redis_blocking.hpp), each command waiting at most
 * chat_outbox.redis_timeout; a terminate or cancel request cuts a wait short within
 * kInterruptSliceMs (SinkInterrupted, the blocking connections' interrupt check). So RedisSinkSend
 * does the whole batch, one call per partition, and RedisSinkAwait only hands over its outcome: on a
 * cluster Postgres does not read batch k+1 while Redis runs batch k. A configuration reload waits
 * for the call in progress (at most the timeout).
 *
 * The Postgres/C++ boundary (cpp_boundary.hpp): the router and everything C++ lives in the static
 * ClusterSink below; it is used only inside CallCpp bodies, which catch RedisFailure themselves and
 * copy what it says into the SinkFailure's fixed buffer, and call no Postgres function.
 */
#include "pg/sink_ops.hpp"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/partitions.hpp"
#include "common/redis_blocking.hpp"
#include "common/redis_cluster.hpp"
#include "common/relay/partition_layout.hpp"
#include "common/relay/redis_link.hpp"
#include "pg/cpp_boundary.hpp"
#include "pg/guc.hpp"

/*
 * The one cluster sink. link is made at the first connect after ClusterSinkUse, with the settings it
 * was made with (a reload that changes one makes it again). Between a RedisSinkSend and its Await,
 * `refused` holds the rows Redis refused alone (outbox id, reason) and `created` the jobs made.
 */
struct ClusterSink
{
	chat_outbox::RedisUrl						 url;
	std::unique_ptr<chat_outbox::RedisLink>		 link;
	int											 timeout_ms = 0;
	int											 min_replicas = 0;
	std::string									 prefix;
	std::vector<std::pair<int64_t, std::string>> refused;
	int											 created = 0;
	std::vector<std::string>					 job_ids; /* encoding scratch: jobs points into job_ids */
	std::vector<chat_outbox::JobSpec>			 jobs;
	char										 warning[CHAT_OUTBOX_ERRLEN] = "";
	char										 appendfsync[32] = "";
	char										 notice[CHAT_OUTBOX_ERRLEN] = ""; /* the router's, to log */
	int64_t										 links_made = 0;				  /* routers made: part of ClusterConnects */
	std::optional<std::string>					 mark;							  /* ClusterGetMark's value, copied out after */
};

static ClusterSink cluster;

/* the blocking connections' interrupt check: a terminate or cancel request (no Postgres call: flags only) */
static bool
SinkInterrupted()
{
	return ProcDiePending || QueryCancelPending;
}

void
ClusterSinkUse(const chat_outbox::RedisUrl &url)
{
	cluster.link.reset();
	cluster.url = url;
	chat_outbox::SetBlockingInterrupt(SinkInterrupted);
}

/* Failed copies a RedisFailure into *failure (C++: inside the CallCpp body that caught it). */
static void
Failed(const chat_outbox::RedisFailure &f, SinkFailure *failure)
{
	failure->shard = 0;
	switch (f.kind) {
		case chat_outbox::RedisFailure::kService:
			failure->kind = FAILURE_SERVICE;
			break;
		case chat_outbox::RedisFailure::kLayoutChanged:
			failure->kind = FAILURE_LAYOUT_CHANGED;
			break;
		case chat_outbox::RedisFailure::kMarkChanged:
			failure->kind = FAILURE_MARK_CHANGED;
			break;
		default:
			failure->kind = SinkInterrupted() ? FAILURE_INTERRUPTED : FAILURE_CONNECTION;
	}
	strlcpy(failure->message, f.what(), sizeof failure->message);
}

/*
 * Every operation below is one CallCpp body between Begin and End: Begin clears *failure; in the
 * body, Link() is the router (made first when needed) and a RedisFailure is caught and copied by
 * Failed; End logs the router's notices (new masters, a MOVED followed, ASKs), once each, keeps its
 * durability warning for the status view, and returns ok.
 */
static void
Begin(SinkFailure *failure)
{
	failure->kind = FAILURE_CONNECTION;
	failure->shard = 0;
	failure->message[0] = '\0';
}

/* C++: inside CallCpp */
static chat_outbox::RedisLink &
Link()
{
	if (!cluster.link || cluster.timeout_ms != chat_outbox_redis_timeout ||
		cluster.min_replicas != chat_outbox_redis_min_replicas || cluster.prefix != chat_outbox_bullmq_prefix) {
		cluster.timeout_ms = chat_outbox_redis_timeout;
		cluster.min_replicas = chat_outbox_redis_min_replicas;
		cluster.prefix = chat_outbox_bullmq_prefix;
		cluster.link =
			chat_outbox::OpenRedisLink(cluster.url, cluster.timeout_ms, cluster.prefix, cluster.min_replicas);
		cluster.links_made++;
	}
	return *cluster.link;
}

static bool
End(bool ok)
{
	chat_outbox::CallCpp([&] {
		cluster.notice[0] = '\0';
		if (!cluster.link)
			return;
		strlcpy(cluster.notice, cluster.link->TakeNotice().c_str(), sizeof cluster.notice);
		strlcpy(cluster.warning, cluster.link->Warning().c_str(), sizeof cluster.warning);
		strlcpy(cluster.appendfsync, cluster.link->Appendfsync().c_str(), sizeof cluster.appendfsync);
	});
	if (cluster.notice[0])
		ereport(LOG, (errmsg("chat_outbox relay: %s", cluster.notice)));
	return ok;
}

/* a slot map is held, or read now (every master asked for PONG): after a failure, the next pass's first step */
static bool
ClusterEnsureConnected(SinkFailure *failure)
{
	bool ok = false;

	Begin(failure);
	chat_outbox::CallCpp([&] {
		try {
			if (!Link().Connected())
				Link().Ping();
			ok = true;
		} catch (const chat_outbox::RedisFailure &f) {
			Failed(f, failure);
		}
	});
	return End(ok);
}

static bool
ClusterSend(int shard, const char *service, const char *queue, int partitions, const LayoutKeyValue *layout,
			const SinkCall *calls, int ncalls, const OutboxRow *rows, SinkFailure *failure)
{
	bool ok = false;

	Begin(failure);
	cluster.created = 0;
	chat_outbox::CallCpp([&] {
		try {
			const std::string on_cluster = chat_outbox::ClusterQueueName(queue);
			const auto		  check = SinkLayoutCheck(on_cluster, layout);

			cluster.refused.clear();
			for (int c = 0; c < ncalls; c++) {
				const OutboxRow *r = rows + calls[c].first;
				int				 n = calls[c].n;

				SinkJobs(r, n, service, &cluster.job_ids, &cluster.jobs);
				auto verdicts = Link().AddBatch(chat_outbox::PartitionQueue(on_cluster, partitions, calls[c].partition),
												check, SinkMarkStep(calls[c]), cluster.jobs.data(), n);
				for (int i = 0; i < n; i++)
					if (verdicts[i])
						cluster.refused.emplace_back(r[i].id, *verdicts[i]);
					else
						cluster.created++;
			}
			ok = true;
		} catch (const chat_outbox::RedisFailure &f) {
			Failed(f, failure);
		}
	});
	return End(ok);
}

/* the batch went whole in ClusterSend: its refusals, palloc'd here */
static bool
ClusterAwait(int shard, int *created, List **refusals, SinkFailure *failure)
{
	*created = cluster.created;
	for (size_t i = 0; i < cluster.refused.size(); i++) {
		SinkRefusal *refusal = (SinkRefusal *) palloc(sizeof(SinkRefusal));

		refusal->row_id = cluster.refused[i].first;
		strlcpy(refusal->reason, cluster.refused[i].second.c_str(), sizeof refusal->reason);
		*refusals = lappend(*refusals, refusal);
	}
	chat_outbox::CallCpp([&] { cluster.refused.clear(); });
	return true;
}

/* WAIT on every master the pass wrote to (the router was made with chat_outbox.redis_min_replicas) */
static bool
ClusterWaitReplicas(int shard, int replicas, SinkFailure *failure)
{
	bool ok = false;

	Begin(failure);
	chat_outbox::CallCpp([&] {
		try {
			Link().ConfirmReplicated();
			ok = true;
		} catch (const chat_outbox::RedisFailure &f) {
			Failed(f, failure);
		}
	});
	return End(ok);
}

static bool
ClusterGetLayout(const char *queue, int *layout, LayoutKeyValue *raw, SinkFailure *failure)
{
	bool ok = false;

	Begin(failure);
	chat_outbox::CallCpp([&] {
		try {
			auto value = Link().Get(chat_outbox::LayoutKey(cluster.prefix, chat_outbox::ClusterQueueName(queue)));
			/* the exact bytes or none: a value cut short here would never equal the key in the script's check */
			bool whole = !value || value->size() < sizeof raw->value;
			auto n = whole ? chat_outbox::ParseLayout(value) : std::nullopt;

			raw->state = value ? LAYOUT_KEY_HOLDS : LAYOUT_KEY_ABSENT;
			strlcpy(raw->value, value && whole ? value->c_str() : "", sizeof raw->value);
			if (!n)
				throw chat_outbox::RedisFailure(chat_outbox::RedisFailure::kService,
												chat_outbox::LayoutValueProblem(queue, value.value_or("")));
			*layout = *n;
			ok = true;
		} catch (const chat_outbox::RedisFailure &f) {
			Failed(f, failure);
		}
	});
	return End(ok);
}

static bool
ClusterSetLayout(const char *queue, int partitions, SinkFailure *failure)
{
	bool ok = false;

	Begin(failure);
	chat_outbox::CallCpp([&] {
		try {
			Link().Set(chat_outbox::LayoutKey(cluster.prefix, chat_outbox::ClusterQueueName(queue)),
					   std::to_string(partitions));
			ok = true;
		} catch (const chat_outbox::RedisFailure &f) {
			Failed(f, failure);
		}
	});
	return End(ok);
}

static bool
ClusterCountJobs(const char *queue, int partitions, int64 *jobs, SinkFailure *failure)
{
	bool ok = false;

	Begin(failure);
	*jobs = 0;
	chat_outbox::CallCpp([&] {
		try {
			auto keys = chat_outbox::QueueJobsKeys(cluster.prefix, chat_outbox::ClusterQueueName(queue), partitions, 0, 1);
			if (!keys.empty())
				*jobs = Link().EvalInteger(chat_outbox::QueueJobsScript(), keys);
			ok = true;
		} catch (const chat_outbox::RedisFailure &f) {
			Failed(f, failure);
		}
	});
	return End(ok);
}

/* a new router counts apart from the one before it: each link's own count starts again at 0 */
static int64
ClusterConnects(void)
{
	int64 n = 0;

	chat_outbox::CallCpp([&] { n = (cluster.links_made << 32) + (cluster.link ? cluster.link->Connects() : 0); });
	return n;
}

static bool
ClusterGetMark(int shard, const char *queue, int partitions, int partition, char **mark, SinkFailure *failure)
{
	bool ok = false;

	Begin(failure);
	*mark = nullptr;
	chat_outbox::CallCpp([&] {
		try {
			cluster.mark = Link().Get(chat_outbox::MarkKey(
				cluster.prefix, chat_outbox::PartitionQueue(chat_outbox::ClusterQueueName(queue), partitions, partition)));
			ok = true;
		} catch (const chat_outbox::RedisFailure &f) {
			Failed(f, failure);
		}
	});
	if (ok && cluster.mark)
		*mark = pstrdup(cluster.mark->c_str()); /* palloc outside CallCpp: an out-of-memory ERROR must not cross it */
	return End(ok);
}

static void
ClusterDisconnect(void)
{
	chat_outbox::CallCpp([&] {
		if (cluster.link)
			cluster.link->Disconnect();
	});
}

static bool
ClusterAwaitingPromotion(void)
{
	bool awaiting = false;

	chat_outbox::CallCpp([&] { awaiting = cluster.link && cluster.link->AwaitingPromotion(); });
	return awaiting;
}

/* the map read when due (the router catches its own failures); a new master's notice logged by End */
static bool
ClusterPromoted(void)
{
	bool promoted = false;

	chat_outbox::CallCpp([&] { promoted = cluster.link && cluster.link->Promoted(); });
	return End(promoted);
}

static const char *
ClusterWarning(void)
{
	return cluster.warning;
}

static const char *
ClusterAppendfsync(void)
{
	return cluster.appendfsync;
}

const SinkOps cluster_sink_ops = {
	ClusterEnsureConnected, ClusterSend, ClusterAwait, ClusterWaitReplicas, ClusterGetLayout, ClusterSetLayout,
	ClusterCountJobs, ClusterConnects, ClusterGetMark, ClusterDisconnect, ClusterWarning, ClusterAppendfsync, ClusterAwaitingPromotion,
	ClusterPromoted, false, /* a partition's queue is in another slot than the layout key: its calls check nothing */
};
