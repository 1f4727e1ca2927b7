// daemon/src/inbox/inbox_writer.hpp - the inbox writer: one transaction per batch into <service>.inbox,
// sent as one pipeline (the statements, and the bound on the inbox lock, are in core/inbox_sql.hpp).
//
// It reports which messages were new (ON CONFLICT DO NOTHING) and which were already there, each
// with its `seq`, and the rows other writers committed above the highest seq already pushed, all in
// seq order. It never retries by itself: the consumer decides, since only the consumer knows whether
// the jobs are still held.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "inbox/core/delivery.hpp"
#include "inbox/core/inbox_sql.hpp"
#include "inbox/inbox_schema.hpp"
#include "net/pg_client.hpp"

namespace chat_outboxd {

struct InboxWriteResult : InboxRows {
	bool ok = false;
	bool connection_lost = false; // the transaction may or may not have committed
	std::string error, sqlstate;
};

class InboxWriter {
  public:
	// stall_timeout_ms: --inbox-stall-timeout (core/inbox_sql.hpp: the bound on the inbox lock).
	InboxWriter(PgClient &pg, const std::string &service, int64_t stall_timeout_ms);
	// Write inserts messages; pushed_up_to is the highest seq already pushed (nullopt: unknown).
	void Write(const std::vector<ChatMessage> &messages, std::optional<int64_t> pushed_up_to,
	           std::function<void(InboxWriteResult &&)> done);
	// ReadHighWater reads the inbox's highest seq (nullopt when the read failed).
	void ReadHighWater(std::function<void(std::optional<int64_t>)> done);

  private:
	void WriteAs(bool with_sender, PgParams params, std::function<void(InboxWriteResult &&)> done);

	PgClient &pg_;
	std::string service_;
	int64_t stall_timeout_ms_;
	InboxSchema schema_;        // chat_outbox 1.0's inbox has no sender: its writes leave it out
	std::string insert_sql_[2]; // [with_sender]
};

} // namespace chat_outboxd
