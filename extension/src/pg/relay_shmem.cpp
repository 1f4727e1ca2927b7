/*
 * extension/src/pg/relay_shmem.cpp - the relay's shared memory (see relay_shmem.hpp).
 *
 * PG15 wants shared memory requested in shmem_request_hook; asking from _PG_init is a FATAL.
 */
#include "pg/relay_shmem.hpp"

RelayShared *relay_shared = nullptr;

static shmem_request_hook_type prev_shmem_request_hook = nullptr;
static shmem_startup_hook_type prev_shmem_startup_hook = nullptr;

static void
RelayShmemRequest(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(RelayShared)));
}

static void
RelayShmemStartup(void)
{
	bool found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	relay_shared = (RelayShared *) ShmemInitStruct("chat_outbox relay", sizeof(RelayShared), &found);
	if (!found) {
		memset(relay_shared, 0, sizeof(RelayShared));
		pg_atomic_init_u32(&relay_shared->worker_procno, INVALID_PGPROCNO_U32);
		pg_atomic_init_u32(&relay_shared->services_generation, 0);
		pg_atomic_init_u32(&relay_shared->dirty_services, 0);
		pg_atomic_init_u32(&relay_shared->worker_listening, 0);
		pg_atomic_init_u32(&relay_shared->connecting, 0);
		pg_atomic_init_u32(&relay_shared->connect_retries, 0);
		SpinLockInit(&relay_shared->mutex);
	}
	LWLockRelease(AddinShmemInitLock);
}

void
InstallRelayShmemHooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = RelayShmemRequest;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = RelayShmemStartup;
}

void
RelaySetState(RelayState state)
{
	if (!relay_shared)
		return;
	SpinLockAcquire(&relay_shared->mutex);
	relay_shared->state = state;
	SpinLockRelease(&relay_shared->mutex);
}

void
RelaySetError(const char *error)
{
	TimestampTz now = GetCurrentTimestamp();

	if (!relay_shared)
		return;
	SpinLockAcquire(&relay_shared->mutex);
	strlcpy(relay_shared->last_error, error, sizeof relay_shared->last_error);
	relay_shared->last_error_at = now;
	SpinLockRelease(&relay_shared->mutex);
}

void
RelaySetRedisWarning(const char *warning, const char *appendfsync)
{
	if (!relay_shared)
		return;
	SpinLockAcquire(&relay_shared->mutex);
	strlcpy(relay_shared->redis_warning, warning, sizeof relay_shared->redis_warning);
	strlcpy(relay_shared->redis_appendfsync, appendfsync, sizeof relay_shared->redis_appendfsync);
	SpinLockRelease(&relay_shared->mutex);
}

/* FindSlot returns the slot of `service`, creating it; -1 when all are taken. Caller holds the mutex. */
static int
FindSlot(const char *service)
{
	for (int i = 0; i < relay_shared->nservices; i++)
		if (strcmp(relay_shared->services[i].name, service) == 0)
			return i;
	if (relay_shared->nservices == CHAT_OUTBOX_MAX_SERVICES)
		return -1;
	strlcpy(relay_shared->services[relay_shared->nservices].name, service, NAMEDATALEN);
	return relay_shared->nservices++;
}

uint32
RelayServiceBit(const char *service)
{
	int i;

	if (!relay_shared)
		return 0;
	SpinLockAcquire(&relay_shared->mutex);
	i = FindSlot(service);
	SpinLockRelease(&relay_shared->mutex);
	return i < 0 ? PG_UINT32_MAX : (uint32) 1 << i;
}

/* UpdateSlot runs update on the slot of `service` under the mutex; nothing when no slot is free. */
template <typename Update>
static void
UpdateSlot(const char *service, Update update)
{
	int i;

	if (!relay_shared)
		return;
	SpinLockAcquire(&relay_shared->mutex);
	i = FindSlot(service);
	if (i >= 0)
		update(&relay_shared->services[i]);
	SpinLockRelease(&relay_shared->mutex);
}

void
RelayRecordBatch(const char *service, int64 last_id, int64 count)
{
	TimestampTz now = GetCurrentTimestamp();

	UpdateSlot(service, [&](RelayServiceSlot *slot) {
		slot->last_id = last_id;
		slot->last_at = now;
		slot->relayed_total += count;
	});
}

void
RelaySetServiceError(const char *service, const char *error)
{
	UpdateSlot(service, [&](RelayServiceSlot *slot) { strlcpy(slot->error, error, CHAT_OUTBOX_ERRLEN); });
}

void
RelaySetServiceLayout(const char *service, int layout, const char *change)
{
	UpdateSlot(service, [&](RelayServiceSlot *slot) {
		slot->layout = layout;
		strlcpy(slot->layout_change, change, CHAT_OUTBOX_ERRLEN);
	});
}

const char *
RelayStateName(RelayState state)
{
	switch (state) {
		case RELAY_STOPPED:
			return "stopped";
		case RELAY_STARTING:
			return "starting";
		case RELAY_RUNNING:
			return "running";
		case RELAY_BACKING_OFF:
			return "backing off";
		case RELAY_PAUSED:
			return "paused";
		case RELAY_WAITING_FOR_EXTENSION:
			return "waiting for extension";
		case RELAY_WAITING_FOR_DATABASE:
			return "waiting for database";
		case RELAY_STANDBY:
			return "standby";
	}
	return "unknown";
}
