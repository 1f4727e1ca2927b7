/* extension/src/pg/kept_plan.cpp - see kept_plan.hpp. */
#include "pg/kept_plan.hpp"

SPIPlanPtr
KeptPlan(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr plan = SPI_prepare(sql, nargs, argtypes);

	if (!plan)
		elog(ERROR, "chat_outbox: SPI_prepare failed for \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "chat_outbox: SPI_keepplan failed");
	return plan;
}
