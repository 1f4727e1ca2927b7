/*
 * extension/src/pg/batch_read.cpp - relay_batch's steps for the usual case, as kept plans (see batch_read.hpp).
 *
 * The steps, each a statement of its own in READ COMMITTED, so each takes a new snapshot:
 *   1. lock the service's row of chat_outbox.services (relays of a service take turns on it);
 *   2. read its cursors, and the id sequence's last value: the Mpre of a tick, read before its S (never
 *      below the cursors' last one: any split point gives the same window, sql/parts/outbox.sql);
 *   3. a new snapshot S (the statement's own) and the generations that can hold the window's rows,
 *      read in S (window_generations says why);
 *   4. the window's rows (chat_outbox.relay_window_query);
 *   5. move the cursors: the window is sent when it came back short, else it goes on after its last row.
 * A window already open (its tick taken for an earlier batch, which came back full) keeps its
 * tick: step 3's snapshot only reads the generations then.
 */
#include "pg/batch_read.hpp"

#include "pg/kept_plan.hpp"

extern "C" {
#include "utils/datum.h"
}

namespace {

const char kLockSql[] = "SELECT FROM chat_outbox.services t WHERE t.name OPERATOR(pg_catalog.=) $1 FOR NO KEY UPDATE";

const char kCursorsSql[] =
	"SELECT x.partition, x.partitions, x.done_snap, x.done_mpre, x.win_snap, x.win_mpre, x.win_m, x.win_last, "
	"COALESCE(pg_catalog.pg_sequence_last_value($2::pg_catalog.regclass), 0) "
	"FROM chat_outbox.outbox_cursors x WHERE x.service OPERATOR(pg_catalog.=) $1 ORDER BY x.partition";

const char kTickSql[] = "SELECT pg_catalog.pg_current_snapshot(), chat_outbox.window_generations(r, $2) "
						"FROM (SELECT) one LEFT JOIN chat_outbox.outbox_rotation r ON r.service OPERATOR(pg_catalog.=) $1";

/* the window's rows in the columns of relay_sql::kClaim; the query itself is relay_window_query's */
const char kWindowSql[] = "SELECT w.id, w.event, w.payload::pg_catalog.text, w.payload OPERATOR(pg_catalog.->>) 'id', "
						  "w.chat_id::pg_catalog.text FROM (%s) w";

const char kFinishSql[] =
	"UPDATE chat_outbox.outbox_cursors x SET done_snap = $2, done_mpre = $3, done_at = pg_catalog.now(), "
	"win_snap = NULL, win_mpre = NULL, win_m = NULL, win_last = NULL WHERE x.service OPERATOR(pg_catalog.=) $1";

const char kHoldSql[] = "UPDATE chat_outbox.outbox_cursors x SET win_snap = $2, win_mpre = $3, win_m = NULL, win_last = $4 "
						"WHERE x.service OPERATOR(pg_catalog.=) $1";

/* whether the installed SQL has the window query and the generations rule (1.5 on) */
const char kLookupSql[] =
	"SELECT pg_catalog.to_regprocedure('chat_outbox.relay_window_query(text)') IS NOT NULL "
	"AND pg_catalog.to_regprocedure('chat_outbox.window_generations(chat_outbox.outbox_rotation, pg_catalog.pg_snapshot)') IS NOT NULL";

/* ValueOf: one column of one row of a statement's result */
Datum
ValueOf(SPITupleTable *t, uint64 row, int col, bool *isnull)
{
	return SPI_getbinval(t->vals[row], t->tupdesc, col, isnull);
}

/* KeepWindow: the window query's plan, in the columns of relay_sql::kClaim */
SPIPlanPtr
KeepWindow(const char *name, Oid *argtypes)
{
	Oid	  types[1] = {TEXTOID};
	Datum args[1] = {CStringGetTextDatum(name)};
	bool  isnull;
	char *query;

	if (SPI_execute_with_args("SELECT chat_outbox.relay_window_query($1)", 1, types, args, nullptr, true, 1) !=
			SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "chat_outbox: reading the window query of service \"%s\" failed", name);
	query = psprintf(kWindowSql, TextDatumGetCString(ValueOf(SPI_tuptable, 0, 1, &isnull)));
	SPI_freetuptable(SPI_tuptable);
	return KeptPlan(query, 12, argtypes);
}

void
Prepare(BatchReadPlans *plans, const char *name)
{
	Oid	 text_arg[1] = {TEXTOID};
	Oid	 cursors_args[2] = {TEXTOID, TEXTOID};
	Oid	 tick_args[2] = {TEXTOID, PG_SNAPSHOTOID};
	Oid	 window_args[12] = {INT8OID, INT8OID, PG_SNAPSHOTOID, PG_SNAPSHOTOID, INT4OID, INT4ARRAYOID,
							INT4OID, INT8OID, INT8OID, INT4OID, INT4OID, INT4OID};
	Oid	 finish_args[3] = {TEXTOID, PG_SNAPSHOTOID, INT8OID};
	Oid	 hold_args[4] = {TEXTOID, PG_SNAPSHOTOID, INT8OID, INT8OID};
	bool isnull;
	bool installed;

	if (plans->prepared)
		return;
	/* looked up at every pass until found: an ALTER EXTENSION UPDATE to 1.5 takes effect without a restart */
	if (SPI_execute(kLookupSql, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "chat_outbox: looking up the window query failed");
	installed = DatumGetBool(ValueOf(SPI_tuptable, 0, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	if (!installed)
		return;
	/* by name, not by oid: a kept oid would outlive a service dropped and created again */
	snprintf(plans->seq, sizeof plans->seq, "%s.outbox_id_seq", quote_identifier(name));
	plans->lock = KeptPlan(kLockSql, 1, text_arg);
	plans->cursors = KeptPlan(kCursorsSql, 2, cursors_args);
	plans->tick = KeptPlan(kTickSql, 2, tick_args);
	plans->window = KeepWindow(name, window_args);
	plans->finish = KeptPlan(kFinishSql, 3, finish_args);
	plans->hold = KeptPlan(kHoldSql, 4, hold_args);
	plans->prepared = true;
}

/* SameState: whether row r's cursor is in row 0's state (relay_batch moves such cursors with one window) */
bool
SameState(SPITupleTable *t, uint64 r, int partitions)
{
	/* the state columns: done_snap, win_snap (pg_snapshot), win_last (int8) */
	static const int columns[] = {3, 5, 8};
	bool			 n0;
	bool			 n1;
	Datum			 d0;
	Datum			 d1;

	if (DatumGetInt32(ValueOf(t, r, 2, &n1)) != partitions || n1)
		return false;
	for (int c : columns) {
		d0 = ValueOf(t, 0, c, &n0);
		d1 = ValueOf(t, r, c, &n1);
		if (n0 != n1)
			return false;
		if (!n0 && !(c == 8 ? DatumGetInt64(d0) == DatumGetInt64(d1) : datumIsEqual(d0, d1, false, -1)))
			return false;
	}
	return true;
}

} // namespace

const char *const kBatchReadSearchPath = "pg_catalog, pg_temp";

void
BatchReadForget(BatchReadPlans *plans)
{
	SPIPlanPtr *all[] = {&plans->lock, &plans->cursors, &plans->tick, &plans->window, &plans->finish, &plans->hold};

	for (SPIPlanPtr *p : all) {
		if (*p)
			SPI_freeplan(*p);
		*p = nullptr;
	}
	plans->prepared = false;
	plans->seq[0] = '\0';
}

bool
BatchRead(BatchReadPlans *plans, const char *name, int batch_size, int partitions, bool excluded_any,
		  SPITupleTable **rows)
{
	Datum		   svc = CStringGetTextDatum(name);
	SPITupleTable *cursors;
	SPITupleTable *tick;
	SPITupleTable *window;
	bool		   isnull;
	bool		   win_open;
	int			   k;
	uint64		   ncursors;
	Datum		   done_snap, done_mpre, win_snap, win_mpre, mpre_now;
	int64		   win_last = PG_INT64_MIN;
	Datum		  *parts;
	Datum		  *gens;
	int			   ngens;
	int64		   last = PG_INT64_MIN;
	uint64		   got;
	int			   ret;

	/* relay_batch raises for another isolation; a partition left out takes its own window */
	if (XactIsoLevel != XACT_READ_COMMITTED || excluded_any || batch_size <= 0)
		return false;
	Prepare(plans, name);
	if (!plans->prepared)
		return false;

	/* 1. take turns with the service's other relays */
	if ((ret = SPI_execute_plan(plans->lock, &svc, nullptr, false, 1)) != SPI_OK_SELECT)
		elog(ERROR, "chat_outbox: locking service \"%s\" failed: %s", name, SPI_result_code_string(ret));
	if (SPI_processed != 1) {
		SPI_freetuptable(SPI_tuptable);
		return false; /* no such service: relay_batch says so */
	}
	SPI_freetuptable(SPI_tuptable);

	/* 2. the cursors, all in one state under the count relayed under, and Mpre */
	{
		Datum args[2] = {svc, CStringGetTextDatum(plans->seq)};

		if ((ret = SPI_execute_plan(plans->cursors, args, nullptr, false, 0)) != SPI_OK_SELECT)
			elog(ERROR, "chat_outbox: reading the cursors of service \"%s\" failed: %s", name, SPI_result_code_string(ret));
	}
	cursors = SPI_tuptable;
	ncursors = SPI_processed;
	k = ncursors > 0 ? (partitions > 0 ? partitions : DatumGetInt32(ValueOf(cursors, 0, 2, &isnull))) : 0;
	for (uint64 r = 0; r < ncursors; r++)
		if (!SameState(cursors, r, k)) {
			ncursors = 0;
			break;
		}
	if (ncursors == 0) {
		/* none yet, made under another count, or moved apart: relay_batch's own ways */
		SPI_freetuptable(cursors);
		return false;
	}
	parts = (Datum *) palloc(sizeof(Datum) * ncursors);
	for (uint64 r = 0; r < ncursors; r++)
		parts[r] = ValueOf(cursors, r, 1, &isnull);
	done_snap = ValueOf(cursors, 0, 3, &isnull);
	done_mpre = ValueOf(cursors, 0, 4, &isnull);
	win_snap = ValueOf(cursors, 0, 5, &isnull);
	win_open = !isnull;
	win_mpre = ValueOf(cursors, 0, 6, &isnull);
	win_last = DatumGetInt64(ValueOf(cursors, 0, 8, &isnull));
	if (isnull)
		win_last = PG_INT64_MIN;
	mpre_now = Int64GetDatum(Max(DatumGetInt64(ValueOf(cursors, 0, 9, &isnull)), DatumGetInt64(done_mpre)));

	/* 3. S, and the generations, read in S */
	{
		Datum args[2] = {svc, done_snap};

		if ((ret = SPI_execute_plan(plans->tick, args, nullptr, false, 1)) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "chat_outbox: a tick of service \"%s\" failed: %s", name, SPI_result_code_string(ret));
	}
	tick = SPI_tuptable;
	if (!win_open) {
		win_snap = ValueOf(tick, 0, 1, &isnull);
		win_mpre = mpre_now;
		win_last = PG_INT64_MIN;
	}
	deconstruct_array(DatumGetArrayTypeP(ValueOf(tick, 0, 2, &isnull)), INT4OID, sizeof(int32), true, TYPALIGN_INT,
					  &gens, nullptr, &ngens);
	if (ngens < 3)
		elog(ERROR, "chat_outbox: window_generations of service \"%s\" returned %d values", name, ngens);

	/* 4. the window's rows */
	{
		int64 mpre = DatumGetInt64(done_mpre);
		/* $2, 1.5's upper id bound, is none: a 1.5 query then reads the whole window too */
		Datum args[12] = {Int64GetDatum(Max(mpre, win_last == PG_INT64_MIN ? mpre : win_last)),
						  Int64GetDatum(PG_INT64_MAX),
						  win_snap,
						  done_snap,
						  Int32GetDatum(k),
						  PointerGetDatum(construct_array(parts, (int) ncursors, INT4OID, sizeof(int32), true,
														  TYPALIGN_INT)),
						  Int32GetDatum(batch_size),
						  Int64GetDatum(win_last),
						  done_mpre,
						  gens[0],
						  gens[1],
						  gens[2]};

		if ((ret = SPI_execute_plan(plans->window, args, nullptr, false, 0)) != SPI_OK_SELECT)
			elog(ERROR, "chat_outbox: reading a window of service \"%s\" failed: %s", name, SPI_result_code_string(ret));
	}
	window = SPI_tuptable;
	got = SPI_processed;
	for (uint64 r = 0; r < got; r++)
		last = Max(last, DatumGetInt64(ValueOf(window, r, 1, &isnull)));

	/* 5. the cursors move: every one of the service's, all in this window */
	if (got < (uint64) batch_size) {
		Datum args[3] = {svc, win_snap, win_mpre};

		ret = SPI_execute_plan(plans->finish, args, nullptr, false, 0);
	} else {
		Datum args[4] = {svc, win_snap, win_mpre, Int64GetDatum(last)};

		ret = SPI_execute_plan(plans->hold, args, nullptr, false, 0);
	}
	if (ret != SPI_OK_UPDATE || SPI_processed != ncursors)
		elog(ERROR, "chat_outbox: moving the cursors of service \"%s\" failed: %s", name, SPI_result_code_string(ret));
	SPI_freetuptable(SPI_tuptable);
	SPI_freetuptable(tick);
	SPI_freetuptable(cursors);
	*rows = window;
	return true;
}
