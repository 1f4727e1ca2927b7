/*
 * extension/src/pg/redis_sink.hpp - the relay's Redis connection: non-blocking, waited on the latch.
 */
#pragma once

#include "pg/relay_shmem.hpp"

/* Points into the claim's result tuples: no copy per row. event and payload are not NUL-terminated. */
typedef struct OutboxRow
{
	int64		id;
	const char *event;
	int			event_len;
	const char *payload;	/* JSON text */
	int			payload_len;
	const char *payload_id; /* payload->>'id', NUL-terminated, may be NULL */
} OutboxRow;

typedef enum FailureKind
{
	FAILURE_CONNECTION = 0,		/* Redis unreachable, too slow, or its answer lost: every service waits */
	FAILURE_SERVICE,			/* this service only: Redis refused its batch (NOPERM, a queue key of the
								 * wrong type) or its SQL failed (a dropped table); the others go on */
	FAILURE_INTERRUPTED			/* a signal cut the exchange short: not Redis' fault */
} FailureKind;

typedef struct SinkFailure
{
	FailureKind kind;
	char		message[CHAT_OUTBOX_ERRLEN];
} SinkFailure;

/* A row of a batch that Redis could not take as a job (its key holds something else); nothing of it was written. */
typedef struct SinkRefusal
{
	int64		row_id;
	char		reason[CHAT_OUTBOX_ERRLEN];
} SinkRefusal;

/* True once a latch set was consumed during Redis I/O: the caller must not sleep before another pass. */
extern bool redis_sink_latch_seen;

bool		RedisSinkEnsureConnected(SinkFailure *failure);
/*
 * A batch goes out in two halves so that Postgres can prepare the next batch while Redis runs this
 * one: RedisSinkSend encodes and writes it (the rows may be freed on return), RedisSinkAwait reads
 * its reply. One batch at a time: every Send must be followed by an Await before the next Send.
 */
bool		RedisSinkSend(const char *service, const char *queue, const OutboxRow *rows, int n, SinkFailure *failure);
/* Each refused row of the batch is appended to *refusals (palloc'd in the current memory context). */
bool		RedisSinkAwait(int *created, List **refusals, SinkFailure *failure);
/*
 * RedisSinkWaitReplicas runs WAIT <replicas> <redis_timeout / 2> once every batch of the pass has
 * been answered (the sink is idle): true when at least `replicas` replicas acknowledged every write
 * this connection made. Fewer is a FAILURE_CONNECTION (the connection is dropped, and a sentinel URL
 * re-discovers its master): the caller rolls back so the rows go again.
 */
bool		RedisSinkWaitReplicas(int replicas, SinkFailure *failure);
void		RedisSinkDisconnect(void);
const char *RedisSinkWarning(void);
/* RedisSinkAppendfsync: Redis' appendfsync at the last connect ("" when CONFIG GET was refused). */
const char *RedisSinkAppendfsync(void);
