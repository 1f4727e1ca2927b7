// daemon/src/net/pg_client.hpp - one non-blocking libpq connection on the libuv loop.
//
// Queries are queued and sent one at a time in order (text parameters and results); the
// callback runs on the loop. A Pipeline is one entry of that queue: its statements go out at once. On a lost connection every queued query fails with
// `connection_lost = true`, and the client reconnects with backoff, logging the state change once.
// Callers decide what to retry: nothing is retried behind their back, so nothing is done twice.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <uv.h>

namespace chat_outboxd {

struct PgResult {
	bool ok = false;
	bool connection_lost = false; // the query may or may not have run
	std::string error;            // primary message
	std::string sqlstate;         // e.g. "23505"
	std::string detail, hint;
	std::vector<std::string> columns;
	std::vector<std::vector<std::optional<std::string>>> rows; // NULL = nullopt
};

using PgParams = std::vector<std::optional<std::string>>;

// One statement of a Pipeline: with a name, run as that prepared statement (prepared on this
// connection's first use, as QueryPrepared does); without one, as an unnamed statement.
// after_answers: sent only once the server has answered every statement before it (a flush
// request, not a Sync: the transaction goes on), so the server has read all of those before it runs
// this one. What a statement from there on takes (a lock) never waits in the server for input still
// in the client's buffers, and those statements go out in one write to a socket with nothing queued.
struct PgStatement {
	std::string name;
	std::string sql;
	PgParams params;
	bool after_answers = false;
};

class PgClient {
  public:
	using Callback = std::function<void(PgResult &&)>;

	// name appears in logs and as application_name.
	PgClient(uv_loop_t *loop, std::string conninfo, std::string name);
	~PgClient();
	PgClient(const PgClient &) = delete;
	PgClient &operator=(const PgClient &) = delete;

	void Start();
	void Query(std::string sql, PgParams params, Callback cb);
	// QueryFirst is Query ahead of every query still waiting (behind the one out): for a query others
	// wait on that must not queue behind many that nobody waits on. Its caller keeps at most one out
	// at a time, so the queries it overtakes are delayed by one query, not starved.
	void QueryFirst(std::string sql, PgParams params, Callback cb);
	// QueryPrepared runs sql as the named prepared statement, preparing it on this connection's
	// first use (again after a reconnect): a statement on the hot path is planned once, not per call.
	void QueryPrepared(std::string statement, std::string sql, PgParams params, Callback cb);
	// Pipeline sends the statements in one round trip (one more before each statement after_answers)
	// and runs them as one transaction: with no BEGIN among them, the server runs everything up to the
	// pipeline's one Sync as an implicit transaction and commits it at the Sync, or rolls all of it
	// back when one fails (the ones after it do not run, and those after_answers are not sent). The
	// callback gets the first error, else the rows of the last statement; with connection_lost, the
	// transaction may or may not have committed. No BEGIN or COMMIT belongs in it.
	void Pipeline(std::vector<PgStatement> statements, Callback cb);
	bool Connected() const;
	// on_state is called with true when a connection is established and false when it is lost.
	void OnStateChange(std::function<void(bool)> on_state);
	// OnNotify: what runs for each NOTIFY this connection hears (after a LISTEN sent with Query; a
	// reconnect forgets it, so LISTEN again in OnStateChange).
	void OnNotify(std::function<void(const std::string &channel, const std::string &payload)> fn);
	// Close fails queued queries, closes the socket and calls done once the uv handles are closed.
	void Close(std::function<void()> done);

  private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace chat_outboxd
