// daemon/src/gateway/send/client_sends.hpp - a client's send: the checks before any SQL, then
// <service>.send_message() on the gateway's own connection (autocommit, so the ack follows COMMIT
// and the outbox row is durable). A send with a client_msg_id (the token's sub required: the key is
// the sender's) is stored once per (chat, sub, client_msg_id): a repeat is answered with the message
// stored first, marked `repeat`, and nothing is written (send_message's rule, sql/parts/services.sql);
// its `sent` goes out again, as the first one's may have been lost with a killed gateway.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/core/config.hpp"
#include "gateway/client/client.hpp"
#include "net/pg_client.hpp"

namespace chat_outboxd {

class Hub;
class QueryQueue;

class ClientSends {
  public:
	ClientSends(Hub &hub, QueryQueue &queries, const Config &cfg);

	// Refusal is the error a send gets before any SQL (empty when it may go to Postgres): a NUL in
	// the body, a client_msg_id that breaks its rule (send/core/client_msg_id.hpp) or comes without a
	// token's sub, a chat outside the token, over --send-rate, or --query-queue full.
	std::optional<nlohmann::json> Refusal(Client &c, int64_t chat_id, const std::string &body,
	                                      const std::optional<std::string> &client_msg_id = std::nullopt);
	// Send stores the message; done gets {ok:true,message:{..}[,repeat:true]} or {ok:false,error:{..}}.
	// sender is the token's sub (empty: none, the message is sent without a sender). With a
	// client_msg_id, the message (ack and `sent`) carries it; a repeat's ack has repeat:true.
	void Send(int64_t chat_id, std::string body, const std::string &sender, std::function<void(nlohmann::json)> done,
	          std::optional<std::string> client_msg_id = std::nullopt);
	// ChangeRefusal is the error an edit or delete gets before any SQL: none without a token's sub (only
	// its author changes a message, and the sub says who that is), a message_id that is no uuid, a NUL
	// in the body, then as Refusal (the chat is checked by the sender rule, not here).
	std::optional<nlohmann::json> ChangeRefusal(Client &c, const std::string &message_id, const std::string *body);
	// Edit and Delete call <service>.edit_message / delete_message with the sub as sender; done gets
	// {ok:true,message:{..., edited_at | deleted_at}} or {ok:false,error:{..}} as Send's.
	void Edit(std::string message_id, std::string body, const std::string &sender, std::function<void(nlohmann::json)> done);
	void Delete(std::string message_id, const std::string &sender, std::function<void(nlohmann::json)> done);
	// OnSent sets what runs with each stored message's {id, chat_id, body, created_at, sender}, before its ack
	// (and with an edited or deleted one's current state).
	void OnSent(std::function<void(const nlohmann::json &)> fn) { on_sent_ = std::move(fn); }

  private:
	Hub &hub_;
	QueryQueue &queries_;
	const Config &cfg_;
	// Answer turns a send's, edit's or delete's result into done's {ok, message} or {ok:false, error}.
	// With a client_msg_id (a send that has one) the row's sixth column says whether it was a repeat.
	std::function<void(PgResult &&)> Answer(std::function<void(nlohmann::json)> done,
	                                        std::optional<std::string> client_msg_id = std::nullopt);
	// Throttled: over --send-rate (sends, edits and deletes count alike) or --query-queue full.
	std::optional<nlohmann::json> Throttled(Client &c);

	std::string sql_edit_, sql_delete_;
	std::string sql_send_[2];    // [with_sender] (QueryQueue::Schema): 1.0's send_message takes no sender
	std::string sql_send_keyed_; // with a client_msg_id: 1.6's send_message, and whether it was a repeat
	std::function<void(const nlohmann::json &)> on_sent_;
};

} // namespace chat_outboxd
