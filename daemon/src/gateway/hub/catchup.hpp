// daemon/src/gateway/hub/catchup.hpp - replays from the durable inbox: a catch-up for a client that
// reconnects with an offset, and the reading-on of a client that fell behind live delivery; and the
// highest seq the gateway knows (put into Socket.IO pids and the /ws welcome).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "base/core/config.hpp"
#include "gateway/client/client.hpp"

namespace chat_outboxd {

class Hub;
class QueryQueue;

class Catchup {
  public:
	Catchup(Hub &hub, QueryQueue &queries, const Config &cfg);
	Catchup(const Catchup &) = delete;
	Catchup &operator=(const Catchup &) = delete;

	// Start replays every message of c's rooms with seq > after, before any live one.
	void Start(const std::shared_ptr<Client> &c, int64_t after);
	// Page reads the next page of c's replay (or waits in line for a --query-queue slot).
	void Page(const std::shared_ptr<Client> &c);

  private:
	// OnSlotFree: the oldest replays waiting for a --query-queue slot go on.
	void OnSlotFree();

	Hub &hub_;
	QueryQueue &queries_;
	const Config &cfg_;
	std::string sql_page_[2];                   // [with_sender] (QueryQueue::Schema)
	std::deque<std::weak_ptr<Client>> waiting_; // replays waiting for a --query-queue slot
};

} // namespace chat_outboxd
