// daemon/src/gateway/conversation/receipts.hpp - read receipts: `read` stores a user's cursor with
// <service>.mark_read() (never backwards), mirrors it in the chat's reads hash in Redis and broadcasts
// it to both sides; what this service's gateways pushed is kept per chat in the shown hash (the last
// message, never backwards); `chat_state` tells a client that joined a chat its unread count, its own
// cursor, every user's last cursor, each service's last shown message and who is present (the count and a
// page). What chat_state shares between the chat's clients is read from Redis once for every join waiting for
// it (one read in flight per chat; the joins that come meanwhile wait for the next), so a storm of joins into
// one chat costs Redis O(1) reads per join plus O(reads in flight), not one list per join. The users' own parts
// (unread, my_read) are read from Postgres the same way: one statement for every join of a chat waiting for it
// (conv::UnreadBatch, lines kept by BatchLines), so the storm costs Postgres O(reads in flight) round trips.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gateway/conversation/conversation.hpp"
#include "gateway/hub/core/batch_lines.hpp"

namespace chat_outboxd {

class Receipts {
  public:
	Receipts(ConvContext &ctx, Presence &presence);
	void Read(const std::shared_ptr<Client> &c, int64_t chat, int64_t seq, const Conversation::Reply &reply);
	// SendChatState emits `chat_state` for chat to c (after its presence was added).
	// Its Postgres lookup (unread, my_read) is batched per chat, and optional: left out while half of
	// --query-queue is out when the batch's turn comes.
	void SendChatState(const std::shared_ptr<Client> &c, int64_t chat);
	// Shown keeps last (the delivered message of chat with the highest seq) as this service's entry
	// of the chat's shown hash, unless the entry is already at or past its seq.
	void Shown(int64_t chat, const InboxMessage &last);

  private:
	// A join waiting for its chat's next unread read: the state it will be sent, and its user (nullopt: no usable sub).
	struct Joiner {
		std::weak_ptr<Client> client;
		std::optional<std::string> user;
		nlohmann::json state;
	};
	// StartReads starts the read of every chat whose joins wait and whose previous read answered.
	void StartReads();
	void ReadUnread(int64_t chat);
	// SendShared queues state (the client's own part) for the chat's next shared read, starting it when none
	// is in flight; ReadShared reads the online count, the first page of users, reads and shown once and
	// sends every waiting client its state with them.
	void SendShared(const std::weak_ptr<Client> &weak, int64_t chat, nlohmann::json state);
	void ReadShared(int64_t chat);
	struct Shared {
		bool reading = false;
		std::vector<std::pair<std::weak_ptr<Client>, nlohmann::json>> waiting;
	};
	ConvContext &ctx_;
	Presence &presence_;
	std::map<int64_t, Shared> shared_;
	BatchLines<int64_t, Joiner> joins_;
	std::string sql_mark_, sql_state_[2]; // sql_state_[QueryQueue::Schema().HasSender()]
};

} // namespace chat_outboxd
