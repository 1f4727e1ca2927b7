// tests/consumer/pg_query_first.cpp - PgClient::QueryFirst on a real connection (consumer.pg_query_first):
// a query put ahead of the waiting ones is answered right after the query out, before the queries
// that waited. The query out is held by an advisory lock another connection holds, so the three
// others are surely queued behind it; the lock is released once they are. Exit 0 when the answers
// came in the order net/core/query_order.hpp states, 1 otherwise.
#include <cstdio>
#include <string>
#include <vector>

#include <uv.h>

#include "net/pg_client.hpp"

using namespace chat_outboxd;

int
main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: pg_query_first <libpq url>\n");
		return 2;
	}
	uv_loop_t *loop = uv_default_loop();
	PgClient holder(loop, argv[1], "pg_query_first holder"), client(loop, argv[1], "pg_query_first client");
	std::vector<std::string> answers;
	bool failed = false;
	int up = 0;
	auto close_both = [&] {
		holder.Close([] {});
		client.Close([] {});
	};
	auto note = [&](const std::string &label) {
		return [&, label](PgResult &&r) {
			if (!r.ok) {
				std::fprintf(stderr, "%s failed: %s\n", label.c_str(), r.error.c_str());
				failed = true;
			}
			answers.push_back(label);
			if (answers.size() == 4)
				close_both();
		};
	};
	auto both_up = [&] {
		holder.Query("SELECT pg_catalog.pg_advisory_lock(4242)", {}, [&](PgResult &&r) {
			if (!r.ok) {
				std::fprintf(stderr, "holder's lock failed: %s\n", r.error.c_str());
				failed = true;
				close_both();
				return;
			}
			// out: sent at once on an idle connection, and waits for the holder's lock
			client.Query("SELECT pg_catalog.pg_advisory_xact_lock(4242)", {}, note("out"));
			client.Query("SELECT 'waiting 1'", {}, note("waiting 1"));
			client.Query("SELECT 'waiting 2'", {}, note("waiting 2"));
			client.QueryFirst("SELECT 'first'", {}, note("first"));
			holder.Query("SELECT pg_catalog.pg_advisory_unlock(4242)", {}, [](PgResult &&) {});
		});
	};
	auto on_state = [&](bool ok) {
		if (ok && ++up == 2)
			both_up();
	};
	holder.OnStateChange(on_state);
	client.OnStateChange(on_state);
	holder.Start();
	client.Start();
	uv_run(loop, UV_RUN_DEFAULT);
	const std::vector<std::string> want = {"out", "first", "waiting 1", "waiting 2"};
	std::string got;
	for (const auto &a : answers)
		got += (got.empty() ? "" : ", ") + a;
	std::printf("answers: %s\n", got.c_str());
	if (failed || answers != want) {
		std::printf("FAIL: want out, first, waiting 1, waiting 2\n");
		return 1;
	}
	std::printf("ok: the query put first was answered right after the one out, before the two waiting\n");
	return 0;
}
