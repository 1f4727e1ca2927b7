// daemon/src/gateway/conversation/history.hpp - `history`: one page of a chat's received and sent messages, read
// from this service's inbox and messages tables in one query and merged by core/history.
#pragma once

#include <memory>
#include <string>

#include "gateway/conversation/conversation.hpp"

namespace chat_outboxd {

class History {
  public:
	explicit History(ConvContext &ctx);
	// Page answers req (already checked against the token and the rate) through reply.
	void Page(const std::shared_ptr<Client> &c, const conv::HistoryRequest &req, const Conversation::Reply &reply);

  private:
	ConvContext &ctx_;
	std::string sql_[2]; // [with_sender] (QueryQueue::Schema)
};

} // namespace chat_outboxd
