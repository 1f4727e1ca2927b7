/*
 * extension/src/pg/kept_plan.hpp - a statement prepared once and kept across transactions (SPI_keepplan).
 *
 * The relay's statements are prepared once per service and kept until one of them fails (a table
 * replaced under the relay), so a pass plans nothing (relay_pass.cpp, batch_read.cpp).
 */
#pragma once

#include "pg/pg.hpp"

/* KeptPlan prepares sql with its parameters' types and keeps the plan; ERROR when either fails. */
SPIPlanPtr KeptPlan(const char *sql, int nargs, Oid *argtypes);
