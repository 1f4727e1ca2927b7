/*
 * extension/src/pg/init.cpp - _PG_init: settings, shared memory, the relay worker.
 */
#include "pg/guc.hpp"
#include "pg/relay_shmem.hpp"

extern "C" {
PG_MODULE_MAGIC;
PGDLLEXPORT void _PG_init(void);
}

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("chat_outbox must be loaded via shared_preload_libraries"),
						errhint("Add chat_outbox to shared_preload_libraries in postgresql.conf and restart.")));

	DefineChatOutboxGucs();
	InstallRelayShmemHooks();

	BackgroundWorker worker;
	memset(&worker, 0, sizeof worker);
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	/*
	 * Started on a hot standby too, where it waits (relay_worker.cpp, WaitWhileStandby) and starts
	 * relaying as soon as the server is promoted: no postmaster event is needed at the promotion,
	 * and chat_outbox.status says "standby" meanwhile.
	 */
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	/* a crash restarts the whole cluster anyway; after an exit, come back quickly */
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "chat_outbox", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "chat_outbox_relay_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "chat_outbox relay", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "chat_outbox relay", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}
