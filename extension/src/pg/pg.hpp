/*
 * extension/src/pg/pg.hpp - every Postgres header the PG zone uses, with C linkage.
 *
 * Postgres headers have no extern "C" guards of their own. Include this first in pg/ files.
 */
#pragma once

extern "C" {
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
}

/*
 * What differs between the PostgreSQL majors the extension builds for (15, 17, 18), each named once
 * here so the code reads the same on all of them:
 *   InBackgroundWorker()  whether this process is a background worker: IsBackgroundWorker until 16,
 *                         AmBackgroundWorkerProcess() from 17 (the variable is gone);
 *   MyProcIndex()         this process's index in ProcGlobal->allProcs (what GetPGProcByNumber takes):
 *                         MyProc->pgprocno until 16, MyProcNumber from 17 (the field is gone).
 */
static inline bool
InBackgroundWorker(void)
{
#if PG_VERSION_NUM >= 170000
	return AmBackgroundWorkerProcess();
#else
	return IsBackgroundWorker;
#endif
}

static inline uint32
MyProcIndex(void)
{
#if PG_VERSION_NUM >= 170000
	return (uint32) MyProcNumber;
#else
	return (uint32) MyProc->pgprocno;
#endif
}
