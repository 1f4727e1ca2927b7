/*
 * extension/src/pg/relay_pass_sql.cpp - chat_outbox.relay_pass(service): one pass from SQL.
 *
 * Runs the worker's read -> push pass (relay_pass.cpp) in the caller's transaction, against
 * the configured Redis, and returns the outbox ids it relayed in order. Isolation specs use it to
 * drive two relays at once; the locks are released when the caller commits or rolls back.
 */
#include "pg/guc.hpp"
#include "pg/relay_pass.hpp"

extern "C" {
PG_FUNCTION_INFO_V1(chat_outbox_relay_pass);
}

Datum
chat_outbox_relay_pass(PG_FUNCTION_ARGS)
{
	char	   *service = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char		queue[256];
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {PG_GETARG_DATUM(0)};
	SinkFailure failure;
	int64	   *ids = nullptr;
	Datum	   *elems;
	int			n;

	SPI_connect();
	if (SPI_execute_with_args("SELECT queue FROM chat_outbox.services WHERE name = $1", 1, argtypes, args, nullptr,
							  true, 1) != SPI_OK_SELECT)
		elog(ERROR, "chat_outbox: reading chat_outbox.services failed");
	if (SPI_processed == 0)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("service \"%s\" does not exist", service),
						errhint("Services are listed in chat_outbox.services.")));
	strlcpy(queue, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), sizeof queue);

	n = RelayPass(RelayServiceFor(service, queue), chat_outbox_batch_size, &ids, &failure);
	if (n < 0 && failure.kind == FAILURE_INTERRUPTED)
		CHECK_FOR_INTERRUPTS(); /* a cancel or terminate request reports itself */
	if (n < 0 && failure.kind == FAILURE_LAYOUT_WAIT)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("service \"%s\" is not relayed yet: %s", service, failure.message),
						errdetail("The batch's rows stay unsent.")));
	if (n < 0 && failure.kind == FAILURE_MARK_CHANGED)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("service \"%s\" was not relayed: %s", service, failure.message),
						errdetail("The batch's rows stay unsent."),
						errhint("Call it again: the next pass checks what Redis kept.")));
	if (n < 0 && failure.kind == FAILURE_LAYOUT_CHANGED)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("service \"%s\" was not relayed: %s", service, failure.message),
						errdetail("The batch's rows stay unsent."),
						errhint("Call it again: the next pass reads the layout key.")));
	if (n < 0)
		ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE),
						errmsg("%s: %s", failure.kind == FAILURE_SERVICE ? "redis refused the batch" : "redis unreachable",
							   failure.message),
						errdetail("The batch's rows stay unsent.")));
	SPI_finish();

	elems = (Datum *) palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
		elems[i] = Int64GetDatum(ids[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
