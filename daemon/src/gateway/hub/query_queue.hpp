// daemon/src/gateway/hub/query_queue.hpp - the gateway's one way to Postgres (its own connection): counts
// the queries handed to PgClient and not answered yet, which --query-queue bounds.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/core/config.hpp"
#include "inbox/inbox_schema.hpp"
#include "net/pg_client.hpp"

namespace chat_outboxd {

class QueryQueue {
  public:
	QueryQueue(PgClient &pg, const Config &cfg);
	QueryQueue(const QueryQueue &) = delete;
	QueryQueue &operator=(const QueryQueue &) = delete;

	// Run sends sql; cb runs with the answer unless the gateway is gone by then, and on_slot_free
	// runs after it.
	void Run(const std::string &sql, PgParams params, std::function<void(PgResult &&)> cb);
	// RunFirst is Run ahead of the queries waiting (PgClient::QueryFirst): for what admissions wait on.
	void RunFirst(const std::string &sql, PgParams params, std::function<void(PgResult &&)> cb);
	// RunBySchema runs sql[Schema().HasSender()] with params(HasSender()) once the schema is known (at
	// once, but for the first query and while the column is missing, see InboxSchema). Its slot is
	// taken now: a query waiting for the schema counts against --query-queue like one waiting for
	// Postgres. sql is the caller's member: it outlives the query.
	void RunBySchema(const std::string (&sql)[2], std::function<PgParams(bool has_sender)> params,
	                 std::function<void(PgResult &&)> cb);
	void RunBySchema(const std::string (&sql)[2], PgParams params, std::function<void(PgResult &&)> cb);
	// Full: --query-queue queries are out. A send is refused then; a replay page waits for a slot.
	bool Full() const { return out_ >= static_cast<size_t>(cfg_.query_queue); }
	// OptionalFull: half of --query-queue is out. A query a client did not ask for (the chat_state
	// lookup of a chat's joins) is left out then, so many joins never leave sends and replays without room.
	bool OptionalFull() const { return out_ * 2 >= static_cast<size_t>(cfg_.query_queue); }
	size_t Waiting() const { return out_; }
	// OnSlotFree sets what runs each time an answer came back (the replays waiting for a slot).
	void OnSlotFree(std::function<void()> fn) { on_slot_free_ = std::move(fn); }
	// Schema: whether the service's tables have `sender` (chat_outbox 1.1), as this connection last
	// found; the statements that name it pick their text by it (Schema().Ready, then HasSender). An
	// answer of undefined_column (42703) to any query makes it be asked again.
	InboxSchema &Schema() { return schema_; }

  private:
	// Submit sends a query whose slot is already counted in out_.
	void Submit(const std::string &sql, PgParams params, std::function<void(PgResult &&)> cb, bool first = false);

	PgClient &pg_;
	const Config &cfg_;
	InboxSchema schema_;
	size_t out_ = 0;
	std::function<void()> on_slot_free_;
	std::shared_ptr<QueryQueue *> alive_; // weak copies tell Postgres callbacks whether we still exist
};

} // namespace chat_outboxd
