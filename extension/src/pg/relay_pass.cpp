/*
 * extension/src/pg/relay_pass.cpp - read a window's batch -> push, the relay's unit of work.
 *
 * In the caller's transaction: first, when the marks' rule says (common/relay/mark_watch.hpp), read
 * each partition's mark in Redis and move back the cursors whose rows Redis lost since it acknowledged
 * them (chat_outbox.relay_rewind), so that they go again (CheckMarks); then batch after batch:
 *   1. read the next batch: chat_outbox.relay_batch (sql/parts/outbox.sql) returns the next rows of
 *      the service's windows and moves its cursors past them. The rows are written once and never
 *      updated: a window is the rows visible in a tick's snapshot and not in the cursor's previous
 *      tick's, sent in id order. A second relay (a rolling deploy, or relay_pass() from SQL) waits
 *      for the first on the service's row of chat_outbox.services and then starts where it ended, so it
 *      never sends later rows ahead of earlier ones, nor the first relay's rows again.
 *   2. push: one EVALSHA adds the batch as BullMQ jobs, in id order, jobId = message id.
 *   2b. each call also checks its partition's mark and writes the cursor's state after the batch
 *      (docs/architecture.md, 'What Redis kept: the marks').
 *   3. with chat_outbox.redis_min_replicas > 0, once every batch is answered: WAIT for that many
 *      replicas on each shard the pass wrote to, and fail the pass (roll back) when any shard's
 *      replicas acknowledge fewer. One WAIT covers every write its connection made, so one per
 *      shard and pass is enough.
 * The cursors' moves are not visible to anyone until the caller commits, and the caller commits
 * only after Redis has acknowledged every batch. If Redis fails, or its answer is lost, the caller
 * rolls back and the cursors are where they were; if the commit is lost after the push, the rows go
 * again. Either way BullMQ records the repeats as duplicates.
 *
 * While Redis runs batch k, Postgres reads batch k+1 (one batch in flight at most, so a batch Redis
 * refused is never followed by a later one). A pass stops at a batch that is not full or after
 * RELAY_PASS_MAX_BATCHES. A late commit keeps its place: a row committed after a tick is in a later
 * window, and so is everything its sender sent after seeing that commit (extension.late_commit_pass).
 */
#include "pg/relay_pass.hpp"

#include <map>
#include <string>

#include "common/relay/mark_watch.hpp"
#include "common/relay/partition_layout.hpp"
#include "common/relay/relay_sql.hpp"
#include "common/partitions.hpp"
#include "pg/cpp_boundary.hpp"
#include "pg/guc.hpp"
#include "pg/kept_plan.hpp"

static RelayService relay_services[CHAT_OUTBOX_MAX_SERVICES];
static int			relay_nservices = 0;

/*
 * When each service's marks were read (common/relay/mark_watch.hpp), by name. A C++ object: used inside
 * CallCpp only. An ERROR that ends a pass leaves it as it was: a call of that pass whose answer was
 * lost makes the next call to its partition find another mark, which fails that pass, and the one
 * after reads them all.
 */
static std::map<std::string, chat_outbox::MarkWatch> *mark_watches;

/* C++: inside CallCpp */
static chat_outbox::MarkWatch &
Watch(const char *service)
{
	if (!mark_watches)
		mark_watches = new std::map<std::string, chat_outbox::MarkWatch>();
	return (*mark_watches)[service];
}

static void
FreePlans(RelayService *svc)
{
	if (svc->claim_plan)
		SPI_freeplan(svc->claim_plan);
	if (svc->rotate_plan)
		SPI_freeplan(svc->rotate_plan);
	if (svc->refuse_plan)
		SPI_freeplan(svc->refuse_plan);
	if (svc->inbox_purge_plan)
		SPI_freeplan(svc->inbox_purge_plan);
	if (svc->partitions_plan)
		SPI_freeplan(svc->partitions_plan);
	if (svc->checks_plan)
		SPI_freeplan(svc->checks_plan);
	if (svc->marks_plan)
		SPI_freeplan(svc->marks_plan);
	svc->claim_plan = svc->rotate_plan = svc->refuse_plan = svc->inbox_purge_plan = svc->partitions_plan = nullptr;
	svc->checks_plan = svc->marks_plan = nullptr;
	BatchReadForget(&svc->read);
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
	chat_outbox::CallCpp([&] {
		if (mark_watches)
			mark_watches->clear();
	});
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
 * to the planner, which then sorts the whole backlog for every batch (docs/journal/relay.md,
 * 'What was tried'). With those settings the generic plan is the right one,
 * so it is forced: a pass does not re-plan its statements. The relay worker sets them once for its
 * session (it runs nothing else that could mind); in a backend (relay_pass()) they are scoped like
 * a function's SET clause: the caller's settings are back when ResetPlanner(level) runs, or when
 * the transaction aborts.
 */
static int
UseIndexOrder(void)
{
	int level;

	if (InBackgroundWorker())
		return -1; /* the relay worker has them for its whole session */
	level = NewGUCNestLevel();
	for (const auto &setting : chat_outbox::relay_sql::kPlannerSettings)
		(void) set_config_option(setting[0], setting[1], PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("search_path", kBatchReadSearchPath, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
							 false);
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
	SetConfigOption("search_path", kBatchReadSearchPath, PGC_SUSET, PGC_S_OVERRIDE);
}

/* KeepPlan keeps the plan of a relay_sql statement, its every %s the service's schema */
static SPIPlanPtr
KeepPlan(const char *fmt, const char *schema, int nargs, Oid *argtypes)
{
	return KeptPlan(psprintf(fmt, schema, schema), nargs, argtypes);
}

/* OutboxBefore12: whether the service's outbox is still 1.1's (before its ALTER EXTENSION UPDATE) */
static bool
OutboxBefore12(RelayService *svc)
{
	Oid	  argtypes[1] = {TEXTOID};
	Datum args[1] = {CStringGetTextDatum(svc->name)};
	bool  isnull;
	bool  before;

	if (SPI_execute_with_args(chat_outbox::relay_sql::kOutboxBefore12, 1, argtypes, args, nullptr, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "chat_outbox: looking up the outbox of service \"%s\" failed", svc->name);
	before = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return before;
}

/*
 * The plans are made once per service and kept until a statement of the service fails (a replaced
 * table, or the update to 1.2 of its outbox: the 1.1 claim fails on the 1.2 view, and the next pass
 * looks again which outbox it has).
 */
static void
PreparePlans(RelayService *svc)
{
	const char *schema = quote_identifier(svc->name);
	Oid			claim_args[4] = {TEXTOID, INT4OID, INT4OID, INT4ARRAYOID};
	Oid			claim_args_1_1[4] = {INT4OID, INT8OID, INT4OID, INT4ARRAYOID};
	Oid			rotate_args[2] = {TEXTOID, INT4OID};
	Oid			purge_args[2] = {INT4OID, INT4OID};
	Oid			refuse_args[2] = {INT8OID, TEXTOID};
	Oid			partitions_args[1] = {TEXTOID};

	if (svc->claim_plan)
		return;
	svc->before_1_2 = OutboxBefore12(svc);
	if (svc->before_1_2) {
		namespace old = chat_outbox::relay_sql::before_1_2;

		svc->claim_plan = KeepPlan(old::kClaim, schema, 4, claim_args_1_1);
		svc->refuse_plan = KeepPlan(old::kRefuse, schema, 2, refuse_args);
		svc->rotate_plan = KeepPlan(old::kPurgeSent, schema, 2, purge_args);
	} else {
		svc->claim_plan = KeepPlan(chat_outbox::relay_sql::kClaim, schema, 4, claim_args);
		/* a row Redis could not take is recorded as refused, with the reason, and is not read again */
		svc->refuse_plan = KeepPlan(chat_outbox::relay_sql::kRefuse, schema, 2, refuse_args);
		svc->rotate_plan = KeepPlan(chat_outbox::relay_sql::kRotate, schema, 2, rotate_args);
	}
	/* the inbox by seq (its unique index), so a round's work is bounded by $2 rows */
	svc->inbox_purge_plan = KeepPlan(chat_outbox::relay_sql::kPurgeInbox, schema, 2, purge_args);
	svc->partitions_plan = KeepPlan(chat_outbox::relay_sql::kWantedPartitions, schema, 1, partitions_args);
}

static int
CompareRowIds(const void *a, const void *b)
{
	int64 x = ((const OutboxRow *) a)->id;
	int64 y = ((const OutboxRow *) b)->id;

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
 * ClaimBatch reads the next batch (the cursors move with it, uncommitted) and returns its rows in id
 * order. The rows point into *claimed and memory of the current context, so they stay valid until
 * the caller frees *claimed and resets the context.
 */
static int
ClaimBatch(RelayService *svc, int batch_size, int64 after, Datum excluded, Snapshot pass_snapshot, OutboxRow **rows_out,
		   SPITupleTable **claimed)
{
	Datum		   args[4] = {CStringGetTextDatum(svc->name), Int32GetDatum(batch_size), Int32GetDatum(svc->layout), excluded};
	Datum		   args_1_1[4] = {Int32GetDatum(batch_size), Int64GetDatum(after), Int32GetDatum(Max(svc->layout, 1)), excluded};
	int			   planner_level = UseIndexOrder();
	ArrayType	  *excluded_array = DatumGetArrayTypeP(excluded);
	bool		   excluded_any = ArrayGetNItems(ARR_NDIM(excluded_array), ARR_DIMS(excluded_array)) > 0;
	int			   ret = SPI_OK_SELECT;
	int			   n;
	OutboxRow	  *rows;
	TupleDesc	   desc;
	SPITupleTable *read = nullptr;

	/* the usual case by the relay's own plans, any other by relay_batch (batch_read.hpp) */
	if (svc->before_1_2) {
		/* 1.1's outbox: every claim of a pass reads with the pass's first snapshot (a late commit waits) */
		ret = SPI_execute_snapshot(svc->claim_plan, args_1_1, nullptr, pass_snapshot, InvalidSnapshot, false, true, 0);
		read = SPI_tuptable;
	} else if (!BatchRead(&svc->read, svc->name, batch_size, svc->layout, excluded_any, &read)) {
		ret = SPI_execute_plan(svc->claim_plan, args, nullptr, false, 0);
		read = SPI_tuptable;
	}
	*claimed = read;
	ResetPlanner(planner_level);
	if (ret != (svc->before_1_2 ? SPI_OK_UPDATE_RETURNING : SPI_OK_SELECT))
		elog(ERROR, "chat_outbox: reading a batch of %s.outbox failed: %s", svc->name, SPI_result_code_string(ret));
	n = read ? (int) read->numvals : 0;
	*rows_out = nullptr;
	if (n == 0)
		return 0;
	desc = read->tupdesc;
	rows = (OutboxRow *) palloc(sizeof(OutboxRow) * n);
	for (int i = 0; i < n; i++) {
		HeapTuple tup = read->vals[i];
		bool	  isnull;
		Datum	  payload_id;

		rows[i].id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		rows[i].event = TextOf(SPI_getbinval(tup, desc, 2, &isnull), &rows[i].event_len);
		rows[i].payload = TextOf(SPI_getbinval(tup, desc, 3, &isnull), &rows[i].payload_len);
		payload_id = SPI_getbinval(tup, desc, 4, &isnull);
		rows[i].payload_id = isnull ? nullptr : text_to_cstring(DatumGetTextPP(payload_id));
		rows[i].chat_id = SPI_getvalue(tup, desc, 5);
		rows[i].partition = 0;
	}
	qsort(rows, n, sizeof(OutboxRow), CompareRowIds);
	*rows_out = rows;
	return n;
}

/*
 * RefuseRows records the rows Redis refused (their job key holds something that is not a job) and
 * why, in this pass's transaction: they stay unsent, the windows leave them out from now on, and
 * the status view counts them. Each is logged here, once: a refused row is not read again.
 */
static void
RefuseRows(RelayService *svc, List *refusals)
{
	ListCell *lc;

	foreach (lc, refusals) {
		SinkRefusal *r = (SinkRefusal *) lfirst(lc);
		Datum		 args[2] = {Int64GetDatum(r->row_id), CStringGetTextDatum(r->reason)};
		int			 ret = SPI_execute_plan(svc->refuse_plan, args, nullptr, false, 0);

		if (ret != (svc->before_1_2 ? SPI_OK_UPDATE : SPI_OK_INSERT))
			elog(ERROR, "chat_outbox: marking %s.outbox row %lld refused failed: %s", svc->name,
				 (long long) r->row_id, SPI_result_code_string(ret));
		ereport(LOG, (errmsg("chat_outbox relay: refused outbox row %lld of %s: %s", (long long) r->row_id,
							 svc->name, r->reason),
					  errdetail("The row stays unsent, with this reason in %s.outbox_refused; the rows after it "
								"are relayed.",
								quote_identifier(svc->name)),
					  errhint("Free the key, then UPDATE %s.outbox SET refused = NULL WHERE id = %lld to relay it.",
							  quote_identifier(svc->name), (long long) r->row_id)));
	}
}

/*
 * PassChecks makes the checks of chat_outbox.pass_checks (sql/parts/outbox.sql) before a pass's first
 * batch: the pass runs READ COMMITTED, and, by a kept plan, whether the id sequence caches or the
 * outbox is not this database's; only then, or in a transaction that has written (relay_pass() from
 * SQL may be called in any), does it run pass_checks itself, which says why the pass cannot run or
 * rebases the outbox. Then it notes, for the transaction, that its pass made them, so that
 * relay_batch (the read's other way) does not make them again after the pass has written. Before the
 * installed SQL is 1.6 (looked up at every pass until found) there is nothing to check.
 */
static const char kChecksLookupSql[] =
	"SELECT pg_catalog.to_regprocedure('chat_outbox.pass_checks(text)') IS NOT NULL";
/* $1 the service, $2 this database as chat_outbox.this_database() names it: pass_checks' own rules */
static const char kChecksSql[] =
	"SELECT COALESCE(chat_outbox.outbox_id_cache($1) OPERATOR(pg_catalog.>) 1, false) "
	"OR chat_outbox.outbox_moved($1, $2)";

static char this_database[64];

static void
PassChecks(RelayService *svc)
{
	Oid	  types[2] = {TEXTOID, TEXTOID};
	Datum args[2];
	bool  isnull;
	bool  needed;
	char  note[NAMEDATALEN + 32];

	if (XactIsoLevel != XACT_READ_COMMITTED)
		ereport(ERROR, (errcode(ERRCODE_INVALID_TRANSACTION_STATE), errmsg("a relay pass needs READ COMMITTED"),
						errdetail("A tick reads the id sequence, then takes a new snapshot.")));
	if (!svc->checks_plan) {
		if (SPI_execute(kChecksLookupSql, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "chat_outbox: looking up chat_outbox.pass_checks failed");
		needed = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		SPI_freetuptable(SPI_tuptable);
		if (!needed)
			return;
		svc->checks_plan = KeptPlan(kChecksSql, 2, types);
	}
	/* this database's name as the SQL names it (one rule: chat_outbox.this_database), read once per backend */
	if (this_database[0] == '\0') {
		if (SPI_execute("SELECT chat_outbox.this_database()", true, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "chat_outbox: reading chat_outbox.this_database() failed");
		strlcpy(this_database, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), sizeof this_database);
		SPI_freetuptable(SPI_tuptable);
	}
	args[0] = CStringGetTextDatum(svc->name);
	args[1] = CStringGetTextDatum(this_database);
	if (SPI_execute_plan(svc->checks_plan, args, nullptr, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "chat_outbox: checking the outbox of service \"%s\" failed", svc->name);
	/* a transaction that has written (relay_pass() from SQL) may have written to the outbox: pass_checks looks */
	needed = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) ||
			 FullTransactionIdIsValid(GetTopFullTransactionIdIfAny());
	SPI_freetuptable(SPI_tuptable);
	if (needed && SPI_execute_with_args("SELECT chat_outbox.pass_checks($1)", 1, types, args, nullptr, false, 1) !=
					  SPI_OK_SELECT)
		elog(ERROR, "chat_outbox: chat_outbox.pass_checks(%s) failed", svc->name);
	snprintf(note, sizeof note, "chat_outbox_pass.%s", svc->name);
	(void) set_config_option(note, "on", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
}

/*
 * MarksPlan: the kept plan of relay_sql::kMarks, or NULL while the installed SQL has no marks (looked
 * up at every pass until found: an ALTER EXTENSION UPDATE takes effect without a restart).
 */
static SPIPlanPtr
MarksPlan(RelayService *svc)
{
	Oid	 types[3] = {TEXTOID, INT4OID, INT4ARRAYOID};
	bool isnull;
	bool installed;

	if (svc->marks_plan || svc->before_1_2)
		return svc->marks_plan;
	if (SPI_execute(chat_outbox::relay_sql::kHasMarks, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "chat_outbox: looking up chat_outbox.relay_marks failed");
	installed = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	if (installed)
		svc->marks_plan = KeptPlan(chat_outbox::relay_sql::kMarks, 3, types);
	return svc->marks_plan;
}

/*
 * CheckMarks is a pass's step before its first batch when the marks' rule says so
 * (common/relay/mark_watch.hpp): it reads the mark of every partition whose shard is up, asks
 * chat_outbox.relay_rewind to move back the cursors whose rows Redis no longer holds (logged: they go
 * again), and notes the read. False when Redis failed (*failure set).
 */
static bool
CheckMarks(RelayService *svc, SinkFailure *failure)
{
	Oid	   text_arg[1] = {TEXTOID};
	Oid	   types[3] = {TEXTOID, INT4ARRAYOID, TEXTARRAYOID};
	int	   nshards = RedisSinkShards();
	int	   count;
	int	   n = 0;
	Datum  args[3];
	Datum *parts;
	Datum *held;
	bool  *nulls;
	bool   must = true;
	bool   isnull;

	chat_outbox::CallCpp([&] { must = Watch(svc->name).MustRead(svc->layout, RedisSinkConnects()); });
	if (!must)
		return true;
	args[0] = CStringGetTextDatum(svc->name);
	if (SPI_execute_with_args(chat_outbox::relay_sql::kCursorCount, 1, text_arg, args, nullptr, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "chat_outbox: reading the cursors of service \"%s\" failed", svc->name);
	count = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	if (isnull || count <= 0)
		return true; /* no cursor yet: nothing was sent, and the first batch makes them */
	parts = (Datum *) palloc(sizeof(Datum) * count);
	held = (Datum *) palloc(sizeof(Datum) * count);
	nulls = (bool *) palloc(sizeof(bool) * count);
	for (int p = 0; p < count; p++) {
		char *mark = nullptr;
		int	  shard = 0;

		chat_outbox::CallCpp([&] { shard = chat_outbox::ShardOf(p, nshards); });
		if (!RedisSinkShardUp(shard))
			continue;
		if (!RedisSinkGetMark(shard, svc->queue, count, p, &mark, failure))
			return false;
		parts[n] = Int32GetDatum(p);
		nulls[n] = mark == nullptr;
		held[n++] = mark ? CStringGetTextDatum(mark) : (Datum) 0;
	}
	{
		int dims[1] = {n};
		int lbs[1] = {1};

		args[1] = PointerGetDatum(construct_array(parts, n, INT4OID, sizeof(int32), true, TYPALIGN_INT));
		args[2] = PointerGetDatum(construct_md_array(held, nulls, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT));
	}
	if (SPI_execute_with_args(chat_outbox::relay_sql::kRewind, 3, types, args, nullptr, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "chat_outbox: chat_outbox.relay_rewind(%s) failed", svc->name);
	for (uint64 r = 0; r < SPI_processed; r++)
		ereport(LOG, (errmsg("chat_outbox relay: redis lacks %s job(s) of service \"%s\", partition %s, that it had "
							 "acknowledged; sending them again",
							 SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2), svc->name,
							 SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1)),
					  errdetail("Its data went back since: a failover to a replica that had not received them, or "
								"a restart from an older copy.")));
	SPI_freetuptable(SPI_tuptable);
	chat_outbox::CallCpp([&] { Watch(svc->name).Read(count, RedisSinkConnects()); });
	return true;
}

/*
 * StepCalls gives each call of a batch its mark's step (relay_sql::kMarks: what the partition's mark
 * must be, and the cursor's state after the batch to write), palloc'd in the current context; none
 * (anything, nothing written) when the SQL has no marks or the cursors are under another count.
 * Must run in the pass's transaction after the batch was read, and its calls' answers be read before
 * the next batch's: each step expects the mark the step before it wrote.
 */
static void
StepCalls(RelayService *svc, int layout, SinkCall *calls, int ncalls)
{
	Datum *parts;
	Datum  args[3];
	bool   isnull;

	if (!svc->marks_plan || ncalls == 0)
		return;
	parts = (Datum *) palloc(sizeof(Datum) * ncalls);
	for (int c = 0; c < ncalls; c++)
		parts[c] = Int32GetDatum(calls[c].partition);
	args[0] = CStringGetTextDatum(svc->name);
	args[1] = Int32GetDatum(layout);
	args[2] = PointerGetDatum(construct_array(parts, ncalls, INT4OID, sizeof(int32), true, TYPALIGN_INT));
	if (SPI_execute_plan(svc->marks_plan, args, nullptr, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "chat_outbox: reading the marks of service \"%s\" failed", svc->name);
	for (uint64 r = 0; r < SPI_processed; r++) {
		HeapTuple tup = SPI_tuptable->vals[r];
		int		  p = DatumGetInt32(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));
		/* NULL: no call of this cursor marked yet, so a mark there is another cursor's: anything goes */
		char *expect = SPI_getvalue(tup, SPI_tuptable->tupdesc, 2);

		for (int c = 0; c < ncalls; c++)
			if (calls[c].partition == p) {
				calls[c].mark_expect = expect;
				calls[c].mark_next = SPI_getvalue(tup, SPI_tuptable->tupdesc, 3);
			}
	}
	SPI_freetuptable(SPI_tuptable);
}

/* ReadWantedPartitions: the service's partition count, as the pass's transaction sees it now. */
static int
ReadWantedPartitions(RelayService *svc)
{
	Datum args[1] = {CStringGetTextDatum(svc->name)};
	int	  ret = SPI_execute_plan(svc->partitions_plan, args, nullptr, true, 1);
	bool  isnull;
	int	  n;

	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "chat_outbox: reading the partition count of service \"%s\" failed", svc->name);
	n = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return isnull ? 1 : n;
}

/*
 * ChooseLayout decides, after the pass's first batch, the partition count the pass relays under
 * (docs/architecture.md, 'Changing the number of partitions'): the count in the layout key on
 * shard 0, or, when the service now wants another one, the new count once no job waits or runs in
 * the old layout's queues (the key is SET before any job goes under it). While jobs remain, the
 * pass fails with FAILURE_LAYOUT_WAIT and relays nothing, so no chat's later rows overtake its
 * earlier ones in another queue. Returns the count, or 0 with *failure set.
 *
 * The key's raw value the count was chosen by stays in svc->layout_key, and every batch call on
 * shard 0 has the batch-add script check that the key still holds it. With one Redis, where every
 * call goes to shard 0, a pass whose service still wants the count of the previous pass therefore
 * reads no key: the script's check is the read, made where the write happens. A key found changed
 * fails that pass with FAILURE_LAYOUT_CHANGED, and the next pass, at once, reads the key here.
 * With several shards, or a Redis Cluster, the key is read at every pass: the calls to the other
 * shards, and the calls to a partition's queue in another hash slot than the key, check nothing.
 */
static int
ChooseLayout(RelayService *svc, SinkFailure *failure)
{
	int						wanted = ReadWantedPartitions(svc);
	int						current;
	int64					jobs = 0;
	chat_outbox::LayoutStep step = chat_outbox::LayoutStep::kRelay;
	LayoutKeyValue			seen;

	if (RedisSinkBatchChecksLayout() && svc->layout_key.state != LAYOUT_KEY_UNKNOWN && svc->layout == wanted) {
		RelaySetServiceLayout(svc->name, svc->layout, "");
		return svc->layout;
	}
	svc->layout_key.state = LAYOUT_KEY_UNKNOWN;
	if (!RedisSinkGetLayout(svc->queue, &current, &seen, failure))
		return 0;
	if (current != wanted && !RedisSinkCountJobs(svc->queue, current, &jobs, failure))
		return 0;
	chat_outbox::CallCpp([&] { step = chat_outbox::NextLayoutStep(current, wanted, jobs); });
	switch (step) {
		case chat_outbox::LayoutStep::kRelay:
			break;
		case chat_outbox::LayoutStep::kWait:
			failure->kind = FAILURE_LAYOUT_WAIT;
			chat_outbox::CallCpp([&] {
				strlcpy(failure->message, chat_outbox::LayoutWaitMessage(current, wanted, jobs).c_str(),
						sizeof failure->message);
			});
			RelaySetServiceLayout(svc->name, current, failure->message);
			if (!svc->layout_waiting)
				ereport(LOG, (errmsg("chat_outbox relay: service \"%s\": %s", svc->name, failure->message),
							  errdetail("Its rows wait in the outbox; it is relayed under the new count once those jobs "
										"are done.")));
			svc->layout_waiting = true;
			return 0;
		case chat_outbox::LayoutStep::kSwitch:
			if (!RedisSinkSetLayout(svc->queue, wanted, failure))
				return 0;
			ereport(LOG, (errmsg("chat_outbox relay: service \"%s\" is relayed to %d partition(s) now, %d before",
								 svc->name, wanted, current),
						  errdetail("The queues of the old layout were empty.")));
			current = wanted;
			seen.state = LAYOUT_KEY_HOLDS; /* what RedisSinkSetLayout wrote */
			snprintf(seen.value, sizeof seen.value, "%d", wanted);
			break;
	}
	RelaySetServiceLayout(svc->name, current, "");
	svc->layout = current;
	svc->layout_key = seen;
	svc->layout_waiting = false;
	return current;
}

/*
 * SendBatch sorts a batch by (partition, id) and sends each shard its calls, one Lua call
 * per partition present (common/relay/partition_layout.hpp), each with its mark's step (StepCalls).
 * sent[s] tells which shards now have a batch in flight. The rows' partitions follow the layout the pass chose.
 */
static bool
SendBatch(RelayService *svc, int layout, OutboxRow *rows, int n, bool *sent, SinkFailure *failure)
{
	int		   nshards = RedisSinkShards();
	int		  *order = (int *) palloc(sizeof(int) * n);
	SinkCall  *calls = (SinkCall *) palloc(sizeof(SinkCall) * n);
	int		  *call_shard = (int *) palloc(sizeof(int) * n);
	OutboxRow *sorted = (OutboxRow *) palloc(sizeof(OutboxRow) * n);
	SinkCall  *shard_calls = (SinkCall *) palloc(sizeof(SinkCall) * n);
	int		   ncalls = 0;

	chat_outbox::CallCpp([&] {
		std::vector<int> parts(n);
		for (int i = 0; i < n; i++)
			parts[i] = chat_outbox::RowPartition(
				rows[i].chat_id ? chat_outbox::ChatIdOfJson(rows[i].chat_id) : std::nullopt, layout);
		std::vector<size_t> perm = chat_outbox::SortOrder(parts);
		std::vector<int>	sorted_parts(n);
		for (int i = 0; i < n; i++) {
			order[i] = static_cast<int>(perm[i]);
			sorted_parts[i] = parts[perm[i]];
		}
		for (const auto &c : chat_outbox::PlanCalls(sorted_parts, nshards)) {
			calls[ncalls] = {c.partition, static_cast<int>(c.first), static_cast<int>(c.n), nullptr, nullptr};
			call_shard[ncalls++] = c.shard;
		}
	});
	StepCalls(svc, layout, calls, ncalls);
	for (int i = 0; i < n; i++)
		sorted[i] = rows[order[i]];
	for (int c = 0; c < ncalls; c++)
		for (int i = calls[c].first; i < calls[c].first + calls[c].n; i++)
			sorted[i].partition = calls[c].partition;
	memcpy(rows, sorted, sizeof(OutboxRow) * n); /* push order, which *ids_out reports */
	for (int s = 0; s < nshards; s++) {
		int k = 0;

		for (int c = 0; c < ncalls; c++)
			if (call_shard[c] == s)
				shard_calls[k++] = calls[c];
		if (k == 0)
			continue;
		if (!RedisSinkShardUp(s)) {
			/* the batch read left this shard's partitions out under another count than the pass relays under */
			failure->kind = FAILURE_SHARD;
			failure->shard = s;
			snprintf(failure->message, sizeof failure->message, "redis shard %d is down", s);
			return false;
		}
		if (!RedisSinkSend(s, svc->name, svc->queue, layout, s == 0 ? &svc->layout_key : nullptr, shard_calls, k, rows,
						   failure))
			return false;
		sent[s] = true;
	}
	return true;
}

/*
 * ExcludedPartitions: the partitions (under the count the service was last relayed under) whose
 * shard is down, as an int4[] for the batch read; empty when every shard is up.
 */
static Datum
ExcludedPartitions(RelayService *svc)
{
	int	   nshards = RedisSinkShards();
	int	   n = Max(svc->layout, 1);
	Datum *parts = (Datum *) palloc(sizeof(Datum) * n);
	int	   k = 0;

	for (int p = 0; p < n && nshards > 1; p++) {
		int shard = 0;

		chat_outbox::CallCpp([&] { shard = chat_outbox::ShardOf(p, nshards); });
		if (!RedisSinkShardUp(shard))
			parts[k++] = Int32GetDatum(p);
	}
	return PointerGetDatum(construct_array(parts, k, INT4OID, sizeof(int32), true, TYPALIGN_INT));
}

/* AwaitBatch reads the replies of every shard with a batch in flight, even after one failed. */
static bool
AwaitBatch(bool *sent, List **refusals, SinkFailure *failure)
{
	bool ok = true;

	for (int s = 0; s < CHAT_OUTBOX_MAX_SHARDS; s++) {
		int			created;
		SinkFailure f;

		if (!sent[s])
			continue;
		sent[s] = false;
		if (!RedisSinkAwait(s, &created, refusals, ok ? failure : &f))
			ok = false;
	}
	return ok;
}

/*
 * Every return goes through the end, where the batch context is deleted: a Redis failure stops the
 * loop instead of returning from inside it. The context is a child of the caller's (SPI's
 * procedure context), so an ERROR in between, which longjmps past the end, still frees it with
 * the transaction; it is never current when deleted, and no row outlives it (RedisSinkSend has
 * encoded the rows before it returns).
 *
 * A failure on any shard fails the whole pass, and the caller rolls it back: every partition of
 * the service waits for the shard (docs/extension.md, 'Partitions and shards', says why).
 */
int
RelayPass(RelayService *svc, int batch_size, int64 **ids_out, SinkFailure *failure)
{
	MemoryContext batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "chat_outbox batch", ALLOCSET_DEFAULT_SIZES);
	MemoryContext outer_cxt = CurrentMemoryContext;
	int64		 *ids = nullptr;
	int64		  last_id = PG_INT64_MIN;
	int			  total = 0;
	bool		  sent[CHAT_OUTBOX_MAX_SHARDS] = {false};
	bool		  written[CHAT_OUTBOX_MAX_SHARDS] = {false}; /* the shards this pass sent a batch to */
	bool		  in_flight = false;
	bool		  ok = true;
	int			  layout = 0;
	List		 *refusals = NIL;
	Datum		  excluded;
	Snapshot	  pass_snapshot;

	PreparePlans(svc);
	if (!RedisSinkEnsureConnected(failure)) {
		MemoryContextDelete(batch_cxt);
		return -1;
	}
	if (ids_out) {
		ids = (int64 *) SPI_palloc(sizeof(int64) * batch_size * RELAY_PASS_MAX_BATCHES);
		*ids_out = ids;
	}
	if (!svc->before_1_2)
		PassChecks(svc);
	if (MarksPlan(svc) && !CheckMarks(svc, failure)) {
		MemoryContextDelete(batch_cxt);
		svc->layout_key.state = LAYOUT_KEY_UNKNOWN;
		chat_outbox::CallCpp([&] { Watch(svc->name).Forget(); });
		return -1;
	}
	excluded = ExcludedPartitions(svc);
	/* registered, so an ERROR's abort releases it; every return below goes through the end */
	pass_snapshot = RegisterSnapshot(GetTransactionSnapshot());
	for (int b = 0; b < RELAY_PASS_MAX_BATCHES; b++) {
		OutboxRow	  *rows;
		int			   n;
		SPITupleTable *claimed;

		MemoryContextSwitchTo(batch_cxt);
		/* Redis runs the previous batch meanwhile; the rows point into `claimed` */
		n = ClaimBatch(svc, batch_size, last_id, excluded, pass_snapshot, &rows, &claimed);
		MemoryContextSwitchTo(outer_cxt);
		if (n > 0 && layout == 0) {
			/* the first batch, before anything is in flight */
			MemoryContextSwitchTo(batch_cxt);
			layout = ChooseLayout(svc, failure);
			MemoryContextSwitchTo(outer_cxt);
			ok = layout > 0;
		}
		if (in_flight)
			ok = AwaitBatch(sent, &refusals, failure) && ok;
		if (n > 0)
			last_id = rows[n - 1].id; /* before SendBatch puts them in push order */
		if (ok && n > 0) {
			MemoryContextSwitchTo(batch_cxt);
			ok = SendBatch(svc, layout, rows, n, sent, failure);
			MemoryContextSwitchTo(outer_cxt);
			for (int s = 0; s < CHAT_OUTBOX_MAX_SHARDS; s++)
				written[s] = written[s] || sent[s];
		}
		in_flight = ok && n > 0;
		for (int i = 0; ok && ids && i < n; i++)
			ids[total + i] = rows[i].id;
		total += n;
		SPI_freetuptable(claimed);
		MemoryContextReset(batch_cxt);
		if (!ok || n < batch_size)
			break;
	}
	/* after a failure too: a shard whose batch went out must have its reply read */
	if (in_flight || !ok) {
		SinkFailure f;

		if (!AwaitBatch(sent, &refusals, ok ? failure : &f))
			ok = false;
	}
	/*
	 * the cursors' moves commit only once the pass's jobs are on enough replicas to survive a failover: on
	 * every shard the pass wrote to, each of which must acknowledge its own writes
	 */
	for (int s = 0; ok && total > 0 && chat_outbox_redis_min_replicas > 0 && s < CHAT_OUTBOX_MAX_SHARDS; s++)
		if (written[s])
			ok = RedisSinkWaitReplicas(s, chat_outbox_redis_min_replicas, failure);
	MemoryContextDelete(batch_cxt);
	UnregisterSnapshot(pass_snapshot);
	if (!ok && failure->kind == FAILURE_CONNECTION && failure->shard > 0)
		failure->kind = FAILURE_SHARD; /* that shard is down now (redis_sink.cpp): the next pass leaves it out */
	if (!ok) {
		svc->layout_key.state = LAYOUT_KEY_UNKNOWN;				  /* whatever failed, the next pass reads the key */
		chat_outbox::CallCpp([&] { Watch(svc->name).Forget(); }); /* and the marks: a call whose answer was lost may have written */
		return -1;
	}
	RefuseRows(svc, refusals);
	if (ids && refusals != NIL) {
		/* *ids_out lists what was relayed: the refused rows were not */
		int kept = 0;

		for (int i = 0; i < total; i++) {
			bool	  refused = false;
			ListCell *lc;

			foreach (lc, refusals)
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
	Datum args[2];
	int	  ret;
	int	  planner_level;

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
RelayRotate(RelayService *svc, int retention_s)
{
	Datum args[2] = {CStringGetTextDatum(svc->name), Int32GetDatum(retention_s)};
	int	  ret;
	bool  isnull;
	Datum waiting;

	PreparePlans(svc);
	if (svc->before_1_2) {
		/* 1.1's outbox: its sent rows are purged, 1,000 per round */
		Datum purge[2] = {Int32GetDatum(retention_s), Int32GetDatum(1000)};

		if (retention_s > 0 && SPI_execute_plan(svc->rotate_plan, purge, nullptr, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "chat_outbox: purge of %s.outbox failed", svc->name);
		return 0;
	}
	ret = SPI_execute_plan(svc->rotate_plan, args, nullptr, false, 1);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "chat_outbox: rotating %s.outbox failed: %s", svc->name, SPI_result_code_string(ret));
	waiting = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	/* logged when what it waits for changes: not at every round while a transaction stays open */
	if (isnull && svc->rotation_wait[0] != '\0') {
		ereport(LOG, (errmsg("chat_outbox relay: the rotation of %s.outbox goes on", svc->name)));
		svc->rotation_wait[0] = '\0';
	} else if (!isnull) {
		char *why = TextDatumGetCString(waiting);

		if (strcmp(why, svc->rotation_wait) != 0)
			ereport(LOG, (errmsg("chat_outbox relay: the rotation of %s.outbox waits for %s", svc->name, why),
						  errdetail("Relaying goes on; only the truncate of the oldest generation waits "
									"(chat_outbox.status, rotation_wait).")));
		strlcpy(svc->rotation_wait, why, sizeof svc->rotation_wait);
	}
	SPI_freetuptable(SPI_tuptable);
	return 0;
}

int
RelayPurgeInbox(RelayService *svc, int retention_s, int limit)
{
	PreparePlans(svc);
	return Purge(svc, svc->inbox_purge_plan, "inbox", retention_s, limit);
}
