// daemon/src/gateway/conversation/conversation.hpp - the conversation events of docs/client-protocol.md, "Conversations":
// requests from clients (history, read, typing, presence; the same for Socket.IO and /ws), the events
// pushed to them (chat_state, presence, typing, read, shown, sent), and the chat's events channel in
// Redis that carries them between the gateways of every service in the conversation.
//
// Conversation owns the shared parts (the reply and event encodings, the rates, the subscription to
// each chat with a local client, the intake of those channels); one class per job holds the rest: History
// (history.*), Receipts (receipts.*: read, unread, chat_state), Presence (presence.*), Typing (typing.*).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <uv.h>

#include "base/core/config.hpp"
#include "base/uv_timer.hpp"
#include "gateway/client/client.hpp"
#include "gateway/conversation/core/conversation.hpp"
#include "gateway/conversation/core/room_events.hpp"
#include "inbox/core/delivery.hpp"

namespace chat_outboxd {

class Hub;
class QueryQueue;
class RedisCommands;
class RedisSubscriber;
class History;
class Receipts;
class Presence;
class Typing;

// ConvContext is what the jobs share: the Hub, Postgres (QueryQueue), Redis for commands and the
// settings, and the Conversation that encodes and broadcasts.
struct ConvContext {
	uv_loop_t *loop;
	Hub &hub;
	QueryQueue &queries;
	RedisCommands &redis;
	const Config &cfg;
	class Conversation &conv;
};

class Conversation {
  public:
	using Reply = std::function<void(nlohmann::json)>;

	Conversation(uv_loop_t *loop, Hub &hub, QueryQueue &queries, RedisCommands &redis, RedisSubscriber &pubsub,
	             const Config &cfg);
	~Conversation();
	Conversation(const Conversation &) = delete;
	Conversation &operator=(const Conversation &) = delete;

	// Handle answers a conversation request through reply ({ok:true,...} or conv::Error); false when
	// name is not one (the endpoint answers it as before).
	bool Handle(const std::shared_ptr<Client> &c, std::string_view name, const nlohmann::json &arg, const Reply &reply);
	// Delivered: inbox messages this gateway pushed (published as `shown` for the senders' side).
	void Delivered(const std::vector<InboxMessage> &messages);
	// Sent: a client's send was acked; message is its {id, chat_id, body, created_at}.
	void Sent(const nlohmann::json &message);
	// Stop ends the presence refresh and the subscriptions (shutdown).
	void Stop();

	// --- for the jobs
	// Emit sends one event to one client, encoded for its protocol.
	void Emit(Client &c, std::string_view event, const nlohmann::json &data);
	// Broadcast sends an event to every client in the chat's room that skip (optional) does not exclude,
	// encoded at most once per protocol.
	void Broadcast(int64_t chat, std::string_view event, const nlohmann::json &data,
	               const std::function<bool(const Client &)> &skip = nullptr);
	// Publish puts an event on the chat's channel; done (optional) gets whether Redis took it.
	void Publish(int64_t chat, conv::Event e, const nlohmann::json &data, std::function<void(bool)> done = nullptr);
	// User: the client as a conversation user (its sub may be unusable: check Identified).
	conv::User User(const Client &c) const;
	static bool Identified(const Client &c) { return conv::UsableSub(c.sub); }
	// Alive lets a callback that outlives the gateway see it is gone.
	std::weak_ptr<bool> Alive() const { return alive_; }

  private:
	void OnRoomChange(Client &c, int64_t chat, bool joined);
	void OnBus(int64_t chat, const std::string &payload);
	// The presence and typing frames of big chats (and of a small chat's bursts) go out at each tick
	// (--presence-interval), which runs while events_ holds anything.
	void StartTicks();
	void Tick();
	// Admit checks a request against the token and the event's rate; a refusal is the error result.
	std::optional<nlohmann::json> Refusal(Client &c, int64_t chat, TokenBucket &bucket, const conv::Rate &rate,
	                                      bool needs_identity);

	Hub &hub_;
	QueryQueue &queries_;
	RedisCommands &redis_;
	RedisSubscriber &pubsub_;
	const Config &cfg_;
	ConvContext ctx_;
	std::unique_ptr<History> history_;
	std::unique_ptr<Receipts> receipts_;
	std::unique_ptr<Presence> presence_;
	std::unique_ptr<Typing> typing_;
	conv::RoomEvents events_;
	UvTimer ticks_;
	std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
	bool stopped_ = false;
};

} // namespace chat_outboxd
