/*
 * extension/src/pg/relay_shmem.hpp - what the relay shares with every backend.
 *
 * The worker's procno (so a committing backend can set its latch) and the state the status view
 * shows. Strings and counters sit under one spinlock: sections are a few stores, never a palloc.
 */
#pragma once

#include "pg/pg.hpp"

#define CHAT_OUTBOX_MAX_SERVICES 32
#define CHAT_OUTBOX_ERRLEN 256

typedef enum RelayState
{
	RELAY_STOPPED = 0,
	RELAY_STARTING,
	RELAY_RUNNING,
	RELAY_BACKING_OFF,
	RELAY_PAUSED,
	RELAY_WAITING_FOR_EXTENSION,
	RELAY_WAITING_FOR_DATABASE,
	RELAY_STANDBY /* the server is a standby (in recovery): relaying starts at promotion */
} RelayState;

typedef struct RelayServiceSlot
{
	char		name[NAMEDATALEN];
	int64		last_id;
	TimestampTz last_at;
	int64		relayed_total;
	char		error[CHAT_OUTBOX_ERRLEN];		   /* why its last pass failed; "" when it worked */
	int			layout;							   /* the partition count it was last relayed under; 0 = not yet */
	char		layout_change[CHAT_OUTBOX_ERRLEN]; /* what a change of the count waits for; "" when none */
} RelayServiceSlot;

typedef struct RelayShared
{
	pg_atomic_uint32 worker_procno;		  /* INVALID_PGPROCNO when no worker runs */
	pg_atomic_uint32 services_generation; /* bumped when chat_outbox.services changes */
	pg_atomic_uint32 dirty_services;	  /* bit i: services[i]'s outbox got rows since the worker looked */
	/*
	 * 1 only while the worker sleeps waiting for commits. A commit sets the worker's latch only then:
	 * while the worker runs a pass or coalesces, dirty_services alone tells it what to do next, and
	 * waking it for every commit of a stream cost it a wake-up (and the sender a kill()) per commit.
	 */
	pg_atomic_uint32 worker_listening;
	/*
	 * Raised by one just before the worker connects to chat_outbox.database, zeroed once it has: the
	 * number of starts in a row whose connection died (FATAL: no such database, or it refuses
	 * connections), see WaitForDatabase.
	 */
	pg_atomic_uint32 connecting;
	pg_atomic_uint32 connect_retries; /* failed connections to a database that exists, in a row */
	slock_t			 mutex;
	int				 worker_pid;
	RelayState		 state;
	char			 last_error[CHAT_OUTBOX_ERRLEN];
	TimestampTz		 last_error_at;
	char			 redis_warning[CHAT_OUTBOX_ERRLEN];
	char			 redis_appendfsync[32]; /* CONFIG GET appendfsync at the last connect; "" unknown */
	int				 nservices;
	RelayServiceSlot services[CHAT_OUTBOX_MAX_SERVICES];
} RelayShared;

#define INVALID_PGPROCNO_U32 ((uint32) 0xFFFFFFFF)

extern RelayShared *relay_shared;

void InstallRelayShmemHooks(void);
void RelaySetState(RelayState state);
void RelaySetError(const char *error);
void RelaySetRedisWarning(const char *warning, const char *appendfsync);
/* RelaySetServiceError records why a service's pass failed ("" once it works again). */
void RelaySetServiceError(const char *service, const char *error);
/* RelaySetServiceLayout records the count a service is relayed under and what a change waits for ("" none). */
void RelaySetServiceLayout(const char *service, int layout, const char *change);
void RelayRecordBatch(const char *service, int64 last_id, int64 count);
/* RelayServiceBit returns the dirty_services bit of a service (all bits once the slots are full). */
uint32		RelayServiceBit(const char *service);
const char *RelayStateName(RelayState state);
