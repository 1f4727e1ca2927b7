/*
 * extension/src/pg/wake_at_commit.cpp - wake the relay when an outbox insert commits.
 *
 * Each outbox has a statement-level AFTER INSERT trigger calling chat_outbox.wake_relay(). The
 * trigger only notes "this transaction wrote an outbox row"; the latch is set from the xact
 * callback at XACT_EVENT_COMMIT. That event fires after the commit is visible to others
 * (ProcArrayEndTransaction), so the worker's next SELECT sees the row. PRE_COMMIT would be
 * too early: the worker would wake, find nothing, and the row would wait for the next poll.
 * A rolled-back transaction wakes nobody. The commit also marks which services' outboxes got rows
 * (relay_shared->dirty_services), so the woken worker passes over those only. The latch is set
 * only while the worker sleeps waiting for commits (worker_listening); a busy worker reads the
 * dirty bits before it would sleep.
 *
 * chat_outbox.services has the same kind of trigger (services_changed) so that a new service or
 * a changed queue reaches the worker at commit rather than at its next periodic refresh.
 *
 * The callback runs where an error is a PANIC ("too late to abort"), so it does nothing but
 * read an atomic and set a latch.
 */
#include "pg/guc.hpp"
#include "pg/relay_shmem.hpp"

extern "C" {
PG_FUNCTION_INFO_V1(chat_outbox_wake_relay);
PG_FUNCTION_INFO_V1(chat_outbox_services_changed);
}

static bool	  wake_callback_registered = false;
static bool	  wake_pending = false;
static bool	  services_changed_pending = false;
static uint32 wake_services_mask = 0;
static Oid	  last_outbox_relid = InvalidOid; /* the last outbox seen, and its service bit */
static uint32 last_outbox_bit = 0;

static void
WakeRelayNow(void)
{
	uint32 procno;

	if (!relay_shared)
		return;
	procno = pg_atomic_read_u32(&relay_shared->worker_procno);
	/* a stale procno can only cause a spurious wake-up of some other process: harmless */
	if (procno != INVALID_PGPROCNO_U32 && procno < ProcGlobal->allProcCount)
		SetLatch(&ProcGlobal->allProcs[procno].procLatch);
}

static void
WakeXactCallback(XactEvent event, void *arg)
{
	switch (event) {
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			if (services_changed_pending && relay_shared)
				pg_atomic_fetch_add_u32(&relay_shared->services_generation, 1);
			if (wake_pending && relay_shared)
				pg_atomic_fetch_or_u32(&relay_shared->dirty_services, wake_services_mask);
			/* fetch_or is a full barrier: either the worker sees our bit before it sleeps, or we see it listening */
			if ((wake_pending && chat_outbox_wake_at_commit && relay_shared &&
				 pg_atomic_read_u32(&relay_shared->worker_listening)) ||
				services_changed_pending)
				WakeRelayNow();
			wake_pending = services_changed_pending = false;
			wake_services_mask = 0;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* COMMIT PREPARED runs elsewhere without us; the poll timer covers 2PC */
			wake_pending = services_changed_pending = false;
			wake_services_mask = 0;
			break;
		default:
			break;
	}
}

static void
RequireTrigger(FunctionCallInfo fcinfo, const char *name)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
						errmsg("%s() must be called as a trigger", name)));
	if (!wake_callback_registered) {
		RegisterXactCallback(WakeXactCallback, nullptr);
		wake_callback_registered = true;
	}
}

Datum
chat_outbox_wake_relay(PG_FUNCTION_ARGS)
{
	Relation rel;

	RequireTrigger(fcinfo, "chat_outbox.wake_relay");
	rel = ((TriggerData *) fcinfo->context)->tg_relation;
	if (RelationGetRelid(rel) != last_outbox_relid) {
		/* the service is the outbox's schema; looked up once per outbox and backend */
		char *service = get_namespace_name(RelationGetNamespace(rel));

		last_outbox_bit = service ? RelayServiceBit(service) : PG_UINT32_MAX;
		last_outbox_relid = RelationGetRelid(rel);
	}
	wake_services_mask |= last_outbox_bit;
	wake_pending = true;
	return PointerGetDatum(nullptr);
}

Datum
chat_outbox_services_changed(PG_FUNCTION_ARGS)
{
	RequireTrigger(fcinfo, "chat_outbox.services_changed");
	services_changed_pending = true;
	return PointerGetDatum(nullptr);
}
