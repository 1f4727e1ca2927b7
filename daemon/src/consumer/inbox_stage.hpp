// daemon/src/consumer/inbox_stage.hpp - the consumer's inbox stage: one batch at a time is written to
// <service>.inbox and its committed rows are pushed to the clients, so clients see queue order.
//
// A write is retried with backoff until it commits; the jobs stay held meanwhile (the consumer
// extends their locks). A row the inbox refuses (InboxRowRefused) is found by writing the batch one
// message at a time; the refused job is marked `rejected` for the consumer to retry or fail, the
// others go on. A batch Postgres rejects with a data exception is written again without created_at.
// After the commit every job is marked inserted or duplicate, the rows RowsToPush picks go to the
// MessageSink, and the consumer is called back to finish the batch in Redis.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <uv.h>

#include "common/backoff.hpp"
#include "base/core/config.hpp"
#include "metrics/core/daemon_metrics.hpp"
#include "base/uv_timer.hpp"
#include "consumer/core/batch.hpp"
#include "inbox/core/delivery.hpp"
#include "inbox/inbox_writer.hpp"
#include "net/pg_client.hpp"

namespace chat_outboxd {

class InboxStage {
  public:
	InboxStage(uv_loop_t *loop, PgClient &pg, const Config &cfg, MessageSink &sink, Metrics &metrics);

	// on_attempt runs before every write attempt (the consumer prefetches the next batch meanwhile).
	void OnAttempt(std::function<void()> on_attempt) { on_attempt_ = std::move(on_attempt); }
	// Write takes the batch (some of its jobs carry a message) until committed(batch) is called.
	void Write(BatchPtr batch, std::function<void(BatchPtr)> committed);
	// Current is the batch in the stage, or null when the stage is free.
	const BatchPtr &Current() const { return batch_; }
	// OnConnected reads the inbox's highest seq while it is not known: rows up to it reach clients by
	// catch-up, rows above it are pushed by this stage; a batch waiting for its retry is written at once.
	void OnConnected();
	// Abandon drops the batch in the stage (a stop that gave up); nothing is called back for it.
	void Abandon();
	void Close(std::function<void()> done);

  private:
	void Attempt();
	void OnWritten(InboxWriteResult &&res);
	void IsolateFrom(size_t i, bool without_created_at);
	void Committed(InboxRows &&rows);
	void Push(InboxRows &&rows);
	void RetryLater();
	void ReadHighWater();
	std::vector<ChatMessage> Messages() const; // the batch's messages, as this attempt writes them

	const Config &cfg_;
	MessageSink &sink_;
	Metrics &metrics_;
	InboxWriter writer_;
	UvTimer retry_timer_;
	chat_outbox::Backoff backoff_{chat_outbox::kServerRetryFirstMs, chat_outbox::kServerRetryMaxMs};
	std::function<void()> on_attempt_;

	BatchPtr batch_;
	std::function<void(BatchPtr)> committed_;
	InboxRows isolated_;   // rows written one message at a time after the batch was refused
	bool failing_ = false; // the last write failed for a reason other than the connection
	bool reading_high_water_ = false;
	// Highest seq pushed to clients: what this stage pushed, at least the inbox's highest seq when the
	// inbox connection first opened. Unknown until that read answers; nothing is written before.
	std::optional<int64_t> pushed_up_to_;
	int64_t commits_ = 0;
};

} // namespace chat_outboxd
