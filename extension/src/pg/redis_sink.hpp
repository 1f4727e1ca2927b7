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

typedef struct SinkFailure
{
	bool		interrupted;	/* a signal cut the exchange short: not Redis' fault */
	char		message[CHAT_OUTBOX_ERRLEN];
} SinkFailure;

/* True once a latch set was consumed during Redis I/O: the caller must not sleep before another pass. */
extern bool redis_sink_latch_seen;

bool		RedisSinkEnsureConnected(SinkFailure *failure);
/*
 * A batch goes out in two halves so that Postgres can prepare the next batch while Redis runs this
 * one: RedisSinkSend encodes and writes it (the rows may be freed on return), RedisSinkAwait reads
 * its reply. One batch at a time: every Send must be followed by an Await before the next Send.
 */
bool		RedisSinkSend(const char *service, const char *queue, const OutboxRow *rows, int n, SinkFailure *failure);
bool		RedisSinkAwait(int *created, SinkFailure *failure);
void		RedisSinkDisconnect(void);
const char *RedisSinkWarning(void);
