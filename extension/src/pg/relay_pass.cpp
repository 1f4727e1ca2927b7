/*
 * extension/src/pg/relay_pass.cpp - claim -> push -> mark, the relay's unit of work.
 *
 * In the caller's transaction:
 *   1. claim: SELECT the oldest unsent rows ORDER BY id LIMIT n FOR UPDATE. Plain FOR UPDATE,
 *      not SKIP LOCKED: a second relay (a rolling deploy, or relay_pass() from SQL) waits for
 *      the first instead of sending later rows ahead of earlier ones.
 *   2. push: one EVALSHA adds the whole batch as BullMQ jobs, jobId = message id.
 *   3. mark: UPDATE ... sent_at = now() WHERE id = ANY(exactly the claimed ids). Never an id
 *      range: in READ COMMITTED a lower id can commit between the SELECT and the UPDATE and
 *      would be marked without having been sent.
 * The caller commits. If Redis fails the caller rolls back and the rows stay unsent; if the
 * commit is lost after the push, the rows go again and BullMQ records them as duplicates.
 */
#include "pg/relay_pass.hpp"

#include "pg/guc.hpp"

static RelayService relay_services[CHAT_OUTBOX_MAX_SERVICES];
static int	relay_nservices = 0;

static void
FreePlans(RelayService *svc)
{
	if (svc->claim_plan)
		SPI_freeplan(svc->claim_plan);
	if (svc->mark_plan)
		SPI_freeplan(svc->mark_plan);
	if (svc->purge_plan)
		SPI_freeplan(svc->purge_plan);
	svc->claim_plan = svc->mark_plan = svc->purge_plan = nullptr;
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
 * the statistics say. A backlog built faster than autovacuum analyzes looks like "189 unsent rows"
 * to the planner, which then sorts the whole backlog for every batch (measured: an external merge
 * sort of 20,000 rows per 500-row batch). With those settings the generic plan is the right one,
 * so it is forced: a pass does not re-plan its statements. The relay worker sets them once for its
 * session (it runs nothing else that could mind); in a backend (relay_pass()) they are scoped like
 * a function's SET clause: the caller's settings are back when ResetPlanner(level) runs, or when
 * the transaction aborts.
 */
static const char *const relay_planner_settings[][2] = {{"enable_sort", "off"},
														  {"enable_seqscan", "off"},
														  {"enable_bitmapscan", "off"},
														  {"plan_cache_mode", "force_generic_plan"}};

static int
UseIndexOrder(void)
{
	int			level;

	if (IsBackgroundWorker)
		return -1;				/* the relay worker has them for its whole session */
	level = NewGUCNestLevel();
	for (const auto &setting : relay_planner_settings)
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
	for (const auto &setting : relay_planner_settings)
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
	Oid			claim_args[1] = {INT4OID};
	Oid			mark_args[1] = {INT8ARRAYOID};
	Oid			purge_args[2] = {INT4OID, INT4OID};

	if (svc->claim_plan)
		return;
	svc->claim_plan = KeepPlan("SELECT id, event, payload::pg_catalog.text, payload OPERATOR(pg_catalog.->>) 'id' "
							   "FROM %s.outbox WHERE sent_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE",
							   schema, 1, claim_args);
	svc->mark_plan = KeepPlan("UPDATE %s.outbox SET sent_at = pg_catalog.now() "
							  "WHERE id OPERATOR(pg_catalog.=) ANY ($1)",
							  schema, 1, mark_args);
	svc->purge_plan = KeepPlan("DELETE FROM %s.outbox WHERE id OPERATOR(pg_catalog.=) ANY (ARRAY("
							   "SELECT id FROM %s.outbox WHERE sent_at OPERATOR(pg_catalog.<) "
							   "(pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => $1)) "
							   "ORDER BY id LIMIT $2))",
							   schema, 2, purge_args);
}

int
RelayClaimPushMark(RelayService *svc, int batch_size, int64 **ids_out, SinkFailure *failure)
{
	Datum		claim_args[1];
	int			ret;
	int			n;
	OutboxRow  *rows;
	int64	   *ids;
	Datum	   *id_datums;
	Datum		mark_args[1];
	int			created;
	int			planner_level;

	PreparePlans(svc);
	claim_args[0] = Int32GetDatum(batch_size);
	planner_level = UseIndexOrder();
	ret = SPI_execute_plan(svc->claim_plan, claim_args, nullptr, false, 0);
	ResetPlanner(planner_level);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "chat_outbox: claim on %s.outbox failed: %s", svc->name, SPI_result_code_string(ret));
	n = (int) SPI_processed;
	if (ids_out)
		*ids_out = nullptr;
	if (n == 0)
		return 0;

	rows = (OutboxRow *) palloc(sizeof(OutboxRow) * n);
	ids = (int64 *) (ids_out ? SPI_palloc(sizeof(int64) * n) : palloc(sizeof(int64) * n));
	id_datums = (Datum *) palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++) {
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		ids[i] = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		id_datums[i] = Int64GetDatum(ids[i]);
		rows[i].id = ids[i];
		rows[i].event = SPI_getvalue(tup, desc, 2);
		rows[i].payload = SPI_getvalue(tup, desc, 3);
		rows[i].payload_id = SPI_getvalue(tup, desc, 4);
	}

	if (!RedisSinkBatchAdd(svc->name, svc->queue, rows, n, &created, failure))
		return -1;

	mark_args[0] = PointerGetDatum(construct_array(id_datums, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	planner_level = UseIndexOrder();
	ret = SPI_execute_plan(svc->mark_plan, mark_args, nullptr, false, 0);
	ResetPlanner(planner_level);
	if (ret != SPI_OK_UPDATE || (int) SPI_processed != n)
		elog(ERROR, "chat_outbox: marking %d rows of %s.outbox sent updated %d", n, svc->name, (int) SPI_processed);

	RelayRecordBatch(svc->name, ids[n - 1], n);
	if (ids_out)
		*ids_out = ids;
	return n;
}

int
RelayPurgeSent(RelayService *svc, int retention_s, int limit)
{
	Datum		args[2];
	int			ret;
	int			planner_level;

	PreparePlans(svc);
	args[0] = Int32GetDatum(retention_s);
	args[1] = Int32GetDatum(limit);
	planner_level = UseIndexOrder();
	ret = SPI_execute_plan(svc->purge_plan, args, nullptr, false, 0);
	ResetPlanner(planner_level);
	if (ret != SPI_OK_DELETE)
		elog(ERROR, "chat_outbox: purge of %s.outbox failed: %s", svc->name, SPI_result_code_string(ret));
	return (int) SPI_processed;
}
