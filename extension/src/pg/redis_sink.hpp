/*
 * extension/src/pg/redis_sink.hpp - the relay's Redis connection: non-blocking, waited on the latch.
 */
#pragma once

#include "pg/relay_shmem.hpp"

typedef struct OutboxRow
{
	int64		id;
	const char *event;
	const char *payload;	/* JSON text */
	const char *payload_id; /* payload->>'id', may be NULL */
} OutboxRow;

typedef struct SinkFailure
{
	bool		interrupted;	/* a signal cut the exchange short: not Redis' fault */
	char		message[CHAT_OUTBOX_ERRLEN];
} SinkFailure;

/* True once a latch set was consumed during Redis I/O: the caller must not sleep before another pass. */
extern bool redis_sink_latch_seen;

bool		RedisSinkEnsureConnected(SinkFailure *failure);
bool		RedisSinkBatchAdd(const char *service, const char *queue, const OutboxRow *rows, int n, int *created,
							  SinkFailure *failure);
void		RedisSinkDisconnect(void);
const char *RedisSinkWarning(void);
