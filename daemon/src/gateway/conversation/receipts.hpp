// daemon/src/gateway/conversation/receipts.hpp - read receipts: `read` stores a user's cursor with
// <service>.mark_read() (never backwards), mirrors it in the chat's reads hash in Redis and broadcasts
// it to both sides; what this service's gateways pushed is kept per chat in the shown hash (the last
// message, never backwards); `chat_state` tells a client that joined a chat its unread count, its own
// cursor, every user's last cursor, each service's last shown message and who is present.
#pragma once

#include <memory>
#include <string>

#include "gateway/conversation/conversation.hpp"

namespace chat_outboxd {

class Receipts {
  public:
	explicit Receipts(ConvContext &ctx);
	void Read(const std::shared_ptr<Client> &c, int64_t chat, int64_t seq, const Conversation::Reply &reply);
	// SendChatState emits `chat_state` for chat to c; users is the presence list read at its join.
	// Its Postgres lookup (unread, my_read) is optional: left out while half of --query-queue is out.
	void SendChatState(const std::shared_ptr<Client> &c, int64_t chat, nlohmann::json users);
	// Shown keeps last (the delivered message of chat with the highest seq) as this service's entry
	// of the chat's shown hash, unless the entry is already at or past its seq.
	void Shown(int64_t chat, const InboxMessage &last);

  private:
	// SendReads adds reads and shown from Redis to state and sends it.
	void SendReads(const std::weak_ptr<Client> &weak, int64_t chat, nlohmann::json state);
	ConvContext &ctx_;
	std::string sql_mark_, sql_state_[2]; // sql_state_[QueryQueue::Schema().HasSender()]
};

} // namespace chat_outboxd
