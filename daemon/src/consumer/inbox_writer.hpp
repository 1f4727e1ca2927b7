// daemon/src/consumer/inbox_writer.hpp - the inbox writer: one statement per batch into <service>.inbox.
//
// It reports which messages were new (ON CONFLICT DO NOTHING) and which were already there, each
// with its `seq`, in seq (= queue) order. It never retries by itself: the consumer decides, since only the consumer knows
// whether the jobs are still held.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "consumer/core/job_message.hpp"
#include "consumer/delivery.hpp"
#include "net/pg_client.hpp"

namespace chat_outboxd {

struct InboxWriteResult {
	bool ok = false;
	bool connection_lost = false;
	std::string error, sqlstate;
	std::vector<InboxMessage> inserted;          // new rows, in seq (= queue) order
	std::vector<std::optional<double>> created;  // parallel: created_at as epoch seconds
	std::vector<InboxMessage> existing;          // rows that were already in the inbox, in seq order
};

class InboxWriter {
  public:
	InboxWriter(PgClient &pg, const std::string &service);
	void Write(const std::vector<ChatMessage> &messages, std::function<void(InboxWriteResult &&)> done);

  private:
	PgClient &pg_;
	std::string sql_;
};

} // namespace chat_outboxd
