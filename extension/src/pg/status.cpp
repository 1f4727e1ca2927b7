/*
 * extension/src/pg/status.cpp - the shared-memory half of the chat_outbox.status view.
 *
 * chat_outbox.relay_worker_status() returns one row about the worker, and
 * chat_outbox.relay_service_status() one row per service the relay has written to. The view
 * joins them with live counts from each outbox.
 */
#include "pg/redis_sink.hpp"

#include <string>

#include "common/partitions.hpp"
#include "pg/cpp_boundary.hpp"
#include "pg/guc.hpp"

extern "C" {
PG_FUNCTION_INFO_V1(chat_outbox_relay_worker_status);
PG_FUNCTION_INFO_V1(chat_outbox_relay_service_status);
PG_FUNCTION_INFO_V1(chat_outbox_relay_redis_shards);
}

static void
RequireSharedMemory(void)
{
	if (!relay_shared)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("chat_outbox is not in shared_preload_libraries"),
						errhint("Add chat_outbox to shared_preload_libraries in postgresql.conf and restart.")));
}

Datum
chat_outbox_relay_worker_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};
	char		last_error[CHAT_OUTBOX_ERRLEN];
	char		warning[CHAT_OUTBOX_ERRLEN];
	char		appendfsync[32];
	TimestampTz last_error_at;
	RelayState	state;
	int			pid;
	bool		running;

	RequireSharedMemory();
	if (get_call_result_type(fcinfo, nullptr, &tupdesc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("return type must be a row type")));
	tupdesc = BlessTupleDesc(tupdesc);

	SpinLockAcquire(&relay_shared->mutex);
	state = relay_shared->state;
	pid = relay_shared->worker_pid;
	last_error_at = relay_shared->last_error_at;
	memcpy(last_error, relay_shared->last_error, sizeof last_error);
	memcpy(warning, relay_shared->redis_warning, sizeof warning);
	memcpy(appendfsync, relay_shared->redis_appendfsync, sizeof appendfsync);
	SpinLockRelease(&relay_shared->mutex);
	running = pg_atomic_read_u32(&relay_shared->worker_procno) != INVALID_PGPROCNO_U32;

	values[0] = CStringGetTextDatum(RelayStateName(running ? state : RELAY_STOPPED));
	values[1] = Int32GetDatum(pid);
	nulls[1] = !running;
	values[2] = CStringGetTextDatum(last_error);
	nulls[2] = last_error[0] == '\0';
	values[3] = TimestampTzGetDatum(last_error_at);
	nulls[3] = last_error[0] == '\0';
	values[4] = CStringGetTextDatum(warning);
	nulls[4] = warning[0] == '\0';
	values[5] = CStringGetTextDatum(appendfsync);
	nulls[5] = appendfsync[0] == '\0';
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

Datum
chat_outbox_relay_service_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo	*rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	RelayServiceSlot slots[CHAT_OUTBOX_MAX_SERVICES];
	int				 n;

	RequireSharedMemory();
	InitMaterializedSRF(fcinfo, 0);
	SpinLockAcquire(&relay_shared->mutex);
	n = relay_shared->nservices;
	memcpy(slots, relay_shared->services, sizeof(RelayServiceSlot) * n);
	SpinLockRelease(&relay_shared->mutex);

	for (int i = 0; i < n; i++) {
		Datum values[7];
		bool  nulls[7] = {false, false, false, false, false, false, false};

		values[0] = CStringGetTextDatum(slots[i].name);
		values[1] = Int64GetDatum(slots[i].last_id);
		values[2] = TimestampTzGetDatum(slots[i].last_at);
		values[3] = Int64GetDatum(slots[i].relayed_total);
		values[4] = CStringGetTextDatum(slots[i].error);
		nulls[4] = slots[i].error[0] == '\0';
		values[5] = Int32GetDatum(slots[i].layout);
		nulls[5] = slots[i].layout == 0;
		values[6] = CStringGetTextDatum(slots[i].layout_change);
		nulls[6] = slots[i].layout_change[0] == '\0';
		/* a slot exists as soon as a commit touched the outbox; nothing relayed yet */
		nulls[1] = nulls[2] = slots[i].last_at == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * chat_outbox.relay_redis_shards(): the shards of chat_outbox.redis_url in order, without their
 * passwords, so the partition view can name each partition's Redis to anyone (the setting itself
 * is superuser-only). A list that does not parse shows no shards (the relay reports why).
 */
Datum
chat_outbox_relay_redis_shards(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char		   urls[CHAT_OUTBOX_MAX_SHARDS][CHAT_OUTBOX_ERRLEN];
	int			   n = 0;
	const char	  *guc = chat_outbox_redis_url ? chat_outbox_redis_url : "";

	InitMaterializedSRF(fcinfo, 0);
	chat_outbox::CallCpp([&] {
		std::string why;
		auto		shards = chat_outbox::ParseShardList(guc, &why);
		if (!shards)
			return;
		for (const auto &url : *shards) {
			if (n == CHAT_OUTBOX_MAX_SHARDS)
				break;
			strlcpy(urls[n++], url.Redacted().c_str(), CHAT_OUTBOX_ERRLEN);
		}
	});
	for (int i = 0; i < n; i++) {
		Datum values[2] = {Int32GetDatum(i), CStringGetTextDatum(urls[i])};
		bool  nulls[2] = {false, false};

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
