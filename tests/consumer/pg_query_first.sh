#!/usr/bin/env bash
# consumer.pg_query_first: PgClient::QueryFirst against a real Postgres (tests/consumer/pg_query_first.cpp):
# a query put ahead of the waiting ones is answered after the one out and before them.
. "$(dirname "$0")/../harness/lib.sh"
harness_init daemon-pg-query-first
harness_pg_start
"${BUILD_DIR:-$H_ROOT/build}/tests/pg_query_first" "$PGURL"
