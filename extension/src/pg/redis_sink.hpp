/*
 * extension/src/pg/redis_sink.hpp - the relay's Redis connection: non-blocking, waited on the latch (on a
 * Redis Cluster, blocking with the timeout and cut short by a terminate request: cluster_sink.cpp).
 */
#pragma once

#include "pg/relay_shmem.hpp"

#define CHAT_OUTBOX_MAX_SHARDS 16

/* Points into the claim's result tuples: no copy per row. event and payload are not NUL-terminated. */
typedef struct OutboxRow
{
	int64		id;
	const char *event;
	int			event_len;
	const char *payload; /* JSON text */
	int			payload_len;
	const char *payload_id; /* payload->>'id', NUL-terminated, may be NULL */
	const char *chat_id;	/* payload->'chat_id' as text when a JSON number, else NULL */
	int			partition;	/* its partition under the layout the pass relays (common/partitions.hpp) */
} OutboxRow;

typedef enum FailureKind
{
	FAILURE_CONNECTION = 0, /* Redis unreachable, too slow, or its answer lost: every service waits */
	FAILURE_SERVICE,		/* this service only: Redis refused its batch (NOPERM, a queue key of the
							 * wrong type) or its SQL failed (a dropped table); the others go on */
	FAILURE_INTERRUPTED,	/* a signal cut the exchange short: not Redis' fault */
	FAILURE_SHARD,			/* a shard other than shard 0 failed: the pass is rolled back and the shard
							 * backs off; the service's next pass leaves its partitions out */
	FAILURE_LAYOUT_WAIT,	/* not a failure: a change of the service's partition count waits for the
							 * old layout's queues to drain; the pass relayed nothing (roll back) */
	FAILURE_LAYOUT_CHANGED, /* not a failure: the layout key held something else than the pass relayed
							 * by, so the batch-add script wrote nothing; roll back, and the next pass
							 * (at once) reads the key again */
	FAILURE_MARK_CHANGED	/* not a failure: a partition's mark was not the one the committed passes
							 * wrote or read (common/relay/mark_watch.hpp), so that call wrote nothing; roll back,
							 * and the next pass (at once) reads the marks and sends again what Redis lost */
} FailureKind;

typedef struct SinkFailure
{
	FailureKind kind;
	int			shard; /* FAILURE_CONNECTION, FAILURE_SHARD: the shard that failed */
	char		message[CHAT_OUTBOX_ERRLEN];
} SinkFailure;

/* A row of a batch that Redis could not take as a job (its key holds something else); nothing of it was written. */
typedef struct SinkRefusal
{
	int64 row_id;
	char  reason[CHAT_OUTBOX_ERRLEN];
} SinkRefusal;

/*
 * The raw value of a queue's layout key (common/partitions.hpp, LayoutKey) as the relay last read or
 * wrote it: what a batch on shard 0 expects the key to hold (common/relay/bullmq_batch_add.hpp).
 * LAYOUT_KEY_UNKNOWN expects nothing. What a value means is ParseLayout's rule alone.
 */
typedef enum LayoutKeyState
{
	LAYOUT_KEY_UNKNOWN = 0,
	LAYOUT_KEY_ABSENT,
	LAYOUT_KEY_HOLDS
} LayoutKeyState;

typedef struct LayoutKeyValue
{
	LayoutKeyState state;
	char		   value[32]; /* LAYOUT_KEY_HOLDS: the value, a count of at most 3 digits when valid */
} LayoutKeyValue;

/* True once a latch set was consumed during Redis I/O: the caller must not sleep before another pass. */
extern bool redis_sink_latch_seen;

/*
 * chat_outbox.redis_url is a whitespace-separated list of shards (common/partitions.hpp), one
 * connection each, or one redis-cluster:// URL: a Redis Cluster, the relay's one shard, each call on
 * the master serving its queue's hash slot (cluster_sink.cpp; sink_ops.hpp says how the two kinds
 * are chosen). RedisSinkEnsureConnected connects every shard (of a cluster: reads its slot map);
 * RedisSinkShards is their number. RedisSinkBatchChecksLayout: every batch call checks the layout
 * key (one Redis, not a cluster), so a pass that keeps the last pass's count need not read it.
 */
bool RedisSinkEnsureConnected(SinkFailure *failure);
int	 RedisSinkShards(void);
bool RedisSinkBatchChecksLayout(void);
/* RelayNowMs: the clock common/relay's decisions (ShardOutage, ServiceStanding) are given, in ms. */
static inline int64
RelayNowMs(void)
{
	return GetCurrentTimestamp() / 1000;
}

/*
 * A shard other than shard 0 that fails is down for a backoff (common/relay/shard_outage.hpp, logged
 * once per outage): RedisSinkShardUp is false meanwhile, RedisSinkEnsureConnected leaves it alone, and
 * passes leave its partitions' rows unclaimed. Shard 0 holds the layout keys, so its failure is
 * every service's (FAILURE_CONNECTION), as with a single Redis.
 */
bool RedisSinkShardUp(int shard);

/*
 * One Lua call of a batch: rows [first, first + n) go to partition `partition`'s queue. The call runs
 * only when the partition's mark holds mark_expect (NULL: anything, "": no mark) and then writes
 * mark_next (NULL: nothing) after its jobs (common/relay/bullmq_batch_add.hpp, MarkStep).
 */
typedef struct SinkCall
{
	int			partition;
	int			first;
	int			n;
	const char *mark_expect;
	const char *mark_next;
} SinkCall;

/*
 * A batch goes out in two halves so that Postgres can prepare the next batch while Redis runs this
 * one: RedisSinkSend encodes and writes a shard's calls (the rows may be freed on return),
 * RedisSinkAwait reads their replies. One batch per shard at a time: every Send to a shard must be
 * followed by an Await of that shard before its next Send. Shards run their halves side by side.
 * Each call checks, before any write, that the layout key holds *layout (shard 0 only: the others
 * pass NULL); a call that finds something else writes nothing, and Await fails with
 * FAILURE_LAYOUT_CHANGED.
 */
bool RedisSinkSend(int shard, const char *service, const char *queue, int partitions,
				   const LayoutKeyValue *layout, const SinkCall *calls, int ncalls, const OutboxRow *rows,
				   SinkFailure *failure);
/* Each refused row of the batch is appended to *refusals (palloc'd in the current memory context). */
bool RedisSinkAwait(int shard, int *created, List **refusals, SinkFailure *failure);
/*
 * RedisSinkWaitReplicas runs WAIT <replicas> <redis_timeout / 2> on a shard once every batch of the
 * pass on it has been answered (the shard is idle): true when at least `replicas` replicas
 * acknowledged every write its connection made. Fewer is a connection failure of that shard (its
 * connection is dropped, and a sentinel URL re-discovers its master): the caller rolls back so the
 * rows go again.
 */
bool RedisSinkWaitReplicas(int shard, int replicas, SinkFailure *failure);

/*
 * The layout key of `queue` on shard 0 (common/partitions.hpp, LayoutKey), and the jobs waiting or
 * running in the queues of a layout (every shard): what a change of the partition count waits for.
 * None may run while a batch is in flight. RedisSinkGetLayout gives the count and the raw value.
 */
bool RedisSinkGetLayout(const char *queue, int *layout, LayoutKeyValue *raw, SinkFailure *failure);
bool RedisSinkSetLayout(const char *queue, int partitions, SinkFailure *failure);
bool RedisSinkCountJobs(const char *queue, int partitions, int64 *jobs, SinkFailure *failure);
void RedisSinkDisconnect(void);
/*
 * RedisSinkConnects changes whenever a connection was made (of a cluster: also a slot map read):
 * compared for equality only (common/relay/redis_link.hpp, Connects). RedisSinkGetMark reads the mark
 * of partition `partition` of `queue` under `partitions` on its shard: *mark palloc'd, NULL when none.
 * None may run while a batch is in flight.
 */
int64 RedisSinkConnects(void);
bool  RedisSinkGetMark(int shard, const char *queue, int partitions, int partition, char **mark, SinkFailure *failure);
/*
 * While the worker backs off after a connection failure: RedisSinkAwaitingPromotion says whether a Redis
 * Cluster's master serving its slots was lost (common/cluster_map_watch.hpp; one Redis or shards:
 * never); RedisSinkPromoted, asked every kClusterRefreshMs meanwhile, reads the slot map when due and
 * says whether a new master took the lost one's place: the backoff ends, the next round goes at once.
 * It blocks at most chat_outbox.redis_timeout per node asked, cut short by a terminate request.
 */
bool		RedisSinkAwaitingPromotion(void);
bool		RedisSinkPromoted(void);
const char *RedisSinkWarning(void);
/* RedisSinkAppendfsync: Redis' appendfsync at the last connect ("" when CONFIG GET was refused). */
const char *RedisSinkAppendfsync(void);
