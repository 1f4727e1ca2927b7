/*
 * extension/src/pg/relay_pass.cpp - mark -> push, the relay's unit of work.
 *
 * In the caller's transaction, batch after batch:
 *   1. claim and mark in one statement: UPDATE ... SET sent_at = now() WHERE sent_at IS NULL AND
 *      id = ANY(ARRAY(SELECT the oldest unsent ids ORDER BY id LIMIT n FOR UPDATE)) RETURNING the rows.
 *      Plain FOR UPDATE, not SKIP LOCKED: a second relay (a rolling deploy, or relay_pass() from
 *      SQL) waits for the first instead of sending later rows ahead of earlier ones; once the first
 *      commits, the row locks recheck sent_at and the second relay takes only what is still unsent.
 *      Each row is written once (not locked, then updated), and exactly the returned rows are
 *      marked, so no row committed in between can be marked without being sent.
 *   2. push: one EVALSHA adds the batch as BullMQ jobs, in id order, jobId = message id.
 *   3. with chat_outbox.redis_min_replicas > 0, once every batch is answered: WAIT for that many
 *      replicas, and fail the pass (roll back) when fewer acknowledge. One WAIT covers every write
 *      the connection made, so one per pass is enough.
 * The marks are not visible to anyone until the caller commits, and the caller commits only after
 * Redis has acknowledged every batch. If Redis fails, or its answer is lost, the caller rolls back
 * and the rows are unsent again; if the commit is lost after the push, the rows go again. Either
 * way BullMQ records the repeats as duplicates.
 *
 * While Redis runs batch k, Postgres claims and marks batch k+1 (one batch in flight at most, so a
 * batch Redis refused is never followed by a later one). A pass stops at a batch that is not full
 * or after RELAY_PASS_MAX_BATCHES. Batch k+1 starts above batch k's last id: the rows this
 * transaction has marked are invisible to it but still in the unsent index, and walking over them
 * again would make each batch of a pass slower than the one before (docs/relay-benchmarks.md has
 * the drain rates). A lower id that commits meanwhile is not lost; it goes in the next
 * pass, as it would after a commit.
 */
#include "pg/relay_pass.hpp"

#include "core/relay_sql.hpp"
#include "pg/guc.hpp"

static RelayService relay_services[CHAT_OUTBOX_MAX_SERVICES];
static int	relay_nservices = 0;

static void
FreePlans(RelayService *svc)
{
	if (svc->claim_plan)
		SPI_freeplan(svc->claim_plan);
	if (svc->purge_plan)
		SPI_freeplan(svc->purge_plan);
	if (svc->refuse_plan)
		SPI_freeplan(svc->refuse_plan);
	if (svc->inbox_purge_plan)
		SPI_freeplan(svc->inbox_purge_plan);
	svc->claim_plan = svc->purge_plan = svc->refuse_plan = svc->inbox_purge_plan = nullptr;
}

void
RelayForgetPlans(RelayService *svc)
{
	FreePlans(svc);
}

void
RelayForgetServices(void)
{
	for (int i = 0; i < relay_nservices; i++)
		FreePlans(&relay_services[i]);
	relay_nservices = 0;
}

RelayService *
RelayServiceFind(const char *name)
{
	for (int i = 0; i < relay_nservices; i++)
		if (strcmp(relay_services[i].name, name) == 0)
			return &relay_services[i];
	elog(ERROR, "chat_outbox: service \"%s\" is not cached", name);
	return nullptr;
}

RelayService *
RelayServiceFor(const char *name, const char *queue)
{
	RelayService *svc = nullptr;

	for (int i = 0; i < relay_nservices && !svc; i++)
		if (strcmp(relay_services[i].name, name) == 0)
			svc = &relay_services[i];
	if (!svc) {
		if (relay_nservices == CHAT_OUTBOX_MAX_SERVICES)
			ereport(ERROR, (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
							errmsg("chat_outbox relays at most %d services", CHAT_OUTBOX_MAX_SERVICES)));
		svc = &relay_services[relay_nservices++];
		memset(svc, 0, sizeof *svc);
		strlcpy(svc->name, name, sizeof svc->name);
	}
	strlcpy(svc->queue, queue, sizeof svc->queue);
	return svc;
}

/*
 * UseIndexOrder makes the planner walk the outbox in id order through its partial index, whatever
 * the statistics say. A backlog built faster than autovacuum analyzes looks like a few unsent rows
 * to the planner, which then sorts the whole backlog for every batch (docs/relay-benchmarks.md,
 * 'What was tried'). With those settings the generic plan is the right one,
 * so it is forced: a pass does not re-plan its statements. The relay worker sets them once for its
 * session (it runs nothing else that could mind); in a backend (relay_pass()) they are scoped like
 * a function's SET clause: the caller's settings are back when ResetPlanner(level) runs, or when
 * the transaction aborts.
 */
static int
UseIndexOrder(void)
{
	int			level;

	if (IsBackgroundWorker)
		return -1;				/* the relay worker has them for its whole session */
	level = NewGUCNestLevel();
	for (const auto &setting : chat_outbox::relay_sql::kPlannerSettings)
		(void) set_config_option(setting[0], setting[1], PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	return level;
}

static void
ResetPlanner(int level)
{
	if (level >= 0)
		AtEOXact_GUC(true, level);
}

void
RelayUseIndexOrderForSession(void)
{
	for (const auto &setting : chat_outbox::relay_sql::kPlannerSettings)
		SetConfigOption(setting[0], setting[1], PGC_SUSET, PGC_S_OVERRIDE);
}

static SPIPlanPtr
KeepPlan(const char *fmt, const char *schema, int nargs, Oid *argtypes)
{
	char	   *sql = psprintf(fmt, schema, schema);
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, argtypes);

	if (!plan)
		elog(ERROR, "chat_outbox: SPI_prepare failed for \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "chat_outbox: SPI_keepplan failed");
	return plan;
}

static void
PreparePlans(RelayService *svc)
{
	const char *schema = quote_identifier(svc->name);
	Oid			claim_args[2] = {INT4OID, INT8OID};
	Oid			purge_args[2] = {INT4OID, INT4OID};
	Oid			refuse_args[2] = {INT8OID, TEXTOID};

	if (svc->claim_plan)
		return;
	/*
	 * id = ANY(ARRAY(subquery)), not id IN (subquery): the locking subquery becomes an InitPlan that
	 * runs exactly once, and the update is one index scan over exactly those ids. As a join (hash
	 * aggregate, then a nested loop) the plan is up to the planner, and it is slower too
	 * (docs/relay-benchmarks.md).
	 */
	svc->claim_plan = KeepPlan(chat_outbox::relay_sql::kClaim, schema, 2, claim_args);
	/* a row Redis could not take goes back to unsent, with the reason, and is not claimed again */
	svc->refuse_plan = KeepPlan(chat_outbox::relay_sql::kRefuse, schema, 2, refuse_args);
	/*
	 * The purge looks at the $2 oldest rows by id and deletes those sent before the cutoff. Filtering
	 * before the LIMIT would walk every younger row in search of $2 old ones: each round would end
	 * with a scan of the whole retention window (with the default 1d and a steady stream, millions
	 * of rows every 10 s) while relaying waits behind it.
	 */
	svc->purge_plan = KeepPlan(chat_outbox::relay_sql::kPurgeSent, schema, 2, purge_args);
	/* the inbox the same way, by seq (its unique index), so a round's work is bounded by $2 rows */
	svc->inbox_purge_plan = KeepPlan(chat_outbox::relay_sql::kPurgeInbox, schema, 2, purge_args);
}

static int
CompareRowIds(const void *a, const void *b)
{
	int64		x = ((const OutboxRow *) a)->id;
	int64		y = ((const OutboxRow *) b)->id;

	return (x > y) - (x < y);
}

/* TextOf points into a text datum without copying it (unless it is compressed or toasted). */
static const char *
TextOf(Datum d, int *len)
{
	struct varlena *t = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(d));

	*len = (int) VARSIZE_ANY_EXHDR(t);
	return VARDATA_ANY(t);
}

/*
 * ClaimAndMark marks the next batch above `after` sent (uncommitted) and returns its rows in id
 * order: RETURNING follows the join, not the ids. The rows point into SPI_tuptable and memory of
 * the current context, so they stay valid until the caller frees the tuptable and resets the context.
 */
static int
ClaimAndMark(RelayService *svc, int batch_size, int64 after, OutboxRow **rows_out)
{
	Datum		args[2] = {Int32GetDatum(batch_size), Int64GetDatum(after)};
	int			planner_level = UseIndexOrder();
	int			ret = SPI_execute_plan(svc->claim_plan, args, nullptr, false, 0);
	int			n;
	OutboxRow  *rows;
	TupleDesc	desc;

	ResetPlanner(planner_level);
	if (ret != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "chat_outbox: claim on %s.outbox failed: %s", svc->name, SPI_result_code_string(ret));
	n = (int) SPI_processed;
	*rows_out = nullptr;
	if (n == 0)
		return 0;
	desc = SPI_tuptable->tupdesc;
	rows = (OutboxRow *) palloc(sizeof(OutboxRow) * n);
	for (int i = 0; i < n; i++) {
		HeapTuple	tup = SPI_tuptable->vals[i];
		bool		isnull;
		Datum		payload_id;

		rows[i].id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		rows[i].event = TextOf(SPI_getbinval(tup, desc, 2, &isnull), &rows[i].event_len);
		rows[i].payload = TextOf(SPI_getbinval(tup, desc, 3, &isnull), &rows[i].payload_len);
		payload_id = SPI_getbinval(tup, desc, 4, &isnull);
		rows[i].payload_id = isnull ? nullptr : text_to_cstring(DatumGetTextPP(payload_id));
	}
	qsort(rows, n, sizeof(OutboxRow), CompareRowIds);
	*rows_out = rows;
	return n;
}

/*
 * RefuseRows unmarks the rows Redis refused (their job key holds something that is not a job) and
 * records why, in this pass's transaction: they stay unsent, the claim skips them from now on, and
 * the status view counts them. Each is logged here, once: a refused row is not claimed again.
 */
static void
RefuseRows(RelayService *svc, List *refusals)
{
	ListCell   *lc;

	foreach(lc, refusals) {
		SinkRefusal *r = (SinkRefusal *) lfirst(lc);
		Datum		args[2] = {Int64GetDatum(r->row_id), CStringGetTextDatum(r->reason)};
		int			ret = SPI_execute_plan(svc->refuse_plan, args, nullptr, false, 0);

		if (ret != SPI_OK_UPDATE)
			elog(ERROR, "chat_outbox: marking %s.outbox row %lld refused failed: %s", svc->name,
				 (long long) r->row_id, SPI_result_code_string(ret));
		ereport(LOG, (errmsg("chat_outbox relay: refused outbox row %lld of %s: %s", (long long) r->row_id,
							 svc->name, r->reason),
					  errdetail("The row stays unsent, with this reason in its column \"refused\"; the rows after it "
								"are relayed."),
					  errhint("Free the key, then UPDATE %s.outbox SET refused = NULL WHERE id = %lld to relay it.",
							  quote_identifier(svc->name), (long long) r->row_id)));
	}
}

/*
 * Every return goes through the end, where the batch context is deleted: a Redis failure stops the
 * loop instead of returning from inside it. The context is a child of the caller's (SPI's
 * procedure context), so an ERROR in between, which longjmps past the end, still frees it with
 * the transaction; it is never current when deleted, and no row outlives it (RedisSinkSend has
 * encoded the rows before it returns).
 */
int
RelayPass(RelayService *svc, int batch_size, int64 **ids_out, SinkFailure *failure)
{
	MemoryContext batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "chat_outbox batch", ALLOCSET_DEFAULT_SIZES);
	MemoryContext outer_cxt = CurrentMemoryContext;
	int64	   *ids = nullptr;
	int64		last_id = PG_INT64_MIN;
	int			total = 0;
	bool		in_flight = false;
	bool		ok = true;
	int			created;
	List	   *refusals = NIL;

	PreparePlans(svc);
	if (ids_out) {
		ids = (int64 *) SPI_palloc(sizeof(int64) * batch_size * RELAY_PASS_MAX_BATCHES);
		*ids_out = ids;
	}
	for (int b = 0; b < RELAY_PASS_MAX_BATCHES; b++) {
		OutboxRow  *rows;
		int			n;

		MemoryContextSwitchTo(batch_cxt);
		n = ClaimAndMark(svc, batch_size, last_id, &rows); /* Redis runs the previous batch meanwhile */
		MemoryContextSwitchTo(outer_cxt);
		if (in_flight)
			ok = RedisSinkAwait(&created, &refusals, failure);
		if (ok && n > 0)
			ok = RedisSinkSend(svc->name, svc->queue, rows, n, failure);
		in_flight = ok && n > 0;
		for (int i = 0; ok && ids && i < n; i++)
			ids[total + i] = rows[i].id;
		if (n > 0)
			last_id = rows[n - 1].id;
		total += n;
		SPI_freetuptable(SPI_tuptable);
		MemoryContextReset(batch_cxt);
		if (!ok || n < batch_size)
			break;
	}
	if (in_flight)
		ok = RedisSinkAwait(&created, &refusals, failure);
	/* the marks commit only once the pass's jobs are on enough replicas to survive a failover */
	if (ok && total > 0 && chat_outbox_redis_min_replicas > 0)
		ok = RedisSinkWaitReplicas(chat_outbox_redis_min_replicas, failure);
	MemoryContextDelete(batch_cxt);
	if (!ok)
		return -1;
	RefuseRows(svc, refusals);
	if (ids && refusals != NIL) {
		/* *ids_out lists what was relayed: the refused rows were not */
		int			kept = 0;

		for (int i = 0; i < total; i++) {
			bool		refused = false;
			ListCell   *lc;

			foreach(lc, refusals)
				refused = refused || ((SinkRefusal *) lfirst(lc))->row_id == ids[i];
			if (!refused)
				ids[kept++] = ids[i];
		}
	}
	total -= list_length(refusals);
	if (total > 0)
		RelayRecordBatch(svc->name, last_id, total);
	return total;
}

static int
Purge(RelayService *svc, SPIPlanPtr plan, const char *table, int retention_s, int limit)
{
	Datum		args[2];
	int			ret;
	int			planner_level;

	args[0] = Int32GetDatum(retention_s);
	args[1] = Int32GetDatum(limit);
	planner_level = UseIndexOrder();
	ret = SPI_execute_plan(plan, args, nullptr, false, 0);
	ResetPlanner(planner_level);
	if (ret != SPI_OK_DELETE)
		elog(ERROR, "chat_outbox: purge of %s.%s failed: %s", svc->name, table, SPI_result_code_string(ret));
	return (int) SPI_processed;
}

int
RelayPurgeSent(RelayService *svc, int retention_s, int limit)
{
	PreparePlans(svc);
	return Purge(svc, svc->purge_plan, "outbox", retention_s, limit);
}

int
RelayPurgeInbox(RelayService *svc, int retention_s, int limit)
{
	PreparePlans(svc);
	return Purge(svc, svc->inbox_purge_plan, "inbox", retention_s, limit);
}
