// daemon/src/gateway/conversation/conversation.cpp - see conversation.hpp.
#include "gateway/conversation/conversation.hpp"

#include <map>

#include "base/log.hpp"
#include "gateway/conversation/core/chat_keys.hpp"
#include "gateway/client/core/message_json.hpp"
#include "gateway/engineio/core/socketio.hpp"
#include "gateway/conversation/history.hpp"
#include "gateway/hub/hub.hpp"
#include "gateway/conversation/presence.hpp"
#include "gateway/hub/query_queue.hpp"
#include "gateway/conversation/receipts.hpp"
#include "gateway/conversation/typing.hpp"
#include "net/redis_commands.hpp"
#include "net/redis_subscriber.hpp"

namespace chat_outboxd {

namespace {

std::string
SioEventText(std::string_view event, const nlohmann::json &data)
{
	return "4" + sio::EncodeEvent("/", nlohmann::json::array({event, data}));
}

std::string
PlainEventText(std::string_view event, const nlohmann::json &data)
{
	nlohmann::json f = data;
	f["type"] = event;
	return DumpJson(f);
}

} // namespace

Conversation::Conversation(uv_loop_t *loop, Hub &hub, QueryQueue &queries, RedisCommands &redis, RedisSubscriber &pubsub,
                           const Config &cfg)
    : hub_(hub), queries_(queries), redis_(redis), pubsub_(pubsub), cfg_(cfg), ctx_{loop, hub, queries, redis, cfg, *this},
      events_(cfg.presence_threshold), ticks_(loop, "presence ticks")
{
	history_ = std::make_unique<History>(ctx_);
	presence_ = std::make_unique<Presence>(ctx_);
	receipts_ = std::make_unique<Receipts>(ctx_, *presence_);
	typing_ = std::make_unique<Typing>(ctx_);
	hub_.OnRoomChange([this](Client &c, int64_t chat, bool joined) { OnRoomChange(c, chat, joined); });
}

Conversation::~Conversation()
{
	*alive_ = false;
}

void
Conversation::Stop()
{
	stopped_ = true;
	presence_->Stop();
	ticks_.Close();
}

conv::User
Conversation::User(const Client &c) const
{
	return conv::User{cfg_.service, c.sub, conv::CleanName(c.name)};
}

std::optional<nlohmann::json>
Conversation::Refusal(Client &c, int64_t chat, TokenBucket &bucket, const conv::Rate &rate, bool needs_identity)
{
	if (!hub_.Allowed(c, chat))
		return conv::Error("forbidden", "chat " + std::to_string(chat) +
		                                    (cfg_.authz == "membership" ? " is not one of this user's" : " is not in the token"));
	if (needs_identity && !Identified(c))
		return conv::Error("no_identity", "the token has no usable sub (1-200 bytes, no control character)");
	if (!bucket.Take(hub_.NowMs(), rate.per_second, rate.burst))
		return conv::RateLimited(bucket.RetryAfterMs(rate.per_second));
	return std::nullopt;
}

bool
Conversation::Handle(const std::shared_ptr<Client> &c, std::string_view name, const nlohmann::json &arg,
                     const Reply &answer)
{
	// Every answer is counted for /metrics by request and result (gateway/conversation/core/conversation_counters.hpp).
	Reply reply = [this, alive = std::weak_ptr<bool>(alive_), name = std::string(name), answer](nlohmann::json r) {
		if (auto a = alive.lock(); a && *a)
			hub_.ConversationCounters().CountRequest(name, r);
		answer(std::move(r));
	};
	std::string error;
	int64_t chat = 0;
	if (name == "history") {
		conv::HistoryRequest req;
		if (!conv::ParseHistory(arg, &req, &error))
			reply(conv::Error("bad_request", error));
		else if (auto refusal = Refusal(*c, req.chat_id, c->history_rate, conv::kHistoryRate, false))
			reply(std::move(*refusal));
		else
			history_->Page(c, req, reply);
		return true;
	}
	if (name == "read") {
		int64_t seq = 0;
		if (!conv::ParseRead(arg, &chat, &seq, &error))
			reply(conv::Error("bad_request", error));
		else if (auto refusal = Refusal(*c, chat, c->read_rate, conv::kReadRate, true))
			reply(std::move(*refusal));
		else
			receipts_->Read(c, chat, seq, reply);
		return true;
	}
	if (name == "typing") {
		bool typing = true;
		if (!conv::ParseTyping(arg, &chat, &typing, &error))
			reply(conv::Error("bad_request", error));
		else if (auto refusal = Refusal(*c, chat, c->typing_rate, conv::kTypingRate, true))
			reply(std::move(*refusal));
		else
			typing_->Report(*c, chat, typing, reply);
		return true;
	}
	if (name == "presence") {
		conv::PresenceRequest preq;
		if (!conv::ParsePresence(arg, &preq, &error))
			reply(conv::Error("bad_request", error));
		else if (auto refusal = Refusal(*c, preq.chat_id, c->presence_rate, conv::kPresenceRate, false))
			reply(std::move(*refusal));
		else
			presence_->List(preq, reply);
		return true;
	}
	return false;
}

void
Conversation::OnRoomChange(Client &c, int64_t chat, bool joined)
{
	if (stopped_)
		return;
	const auto *members = hub_.RoomMembers(chat);
	std::string channel = ChatEventsChannel({cfg_.prefix, cfg_.redis_cluster}, chat);
	if (joined) {
		// The first local client of a chat subscribes this gateway to the chat's events.
		if (members && members->size() == 1) {
			std::weak_ptr<bool> alive = alive_;
			pubsub_.Subscribe(
			    channel, [this, alive, chat](const std::string &, const std::string &payload) {
				    if (auto a = alive.lock(); a && *a)
					    OnBus(chat, payload);
			    },
			    nullptr);
		}
		// The join itself costs O(1) in Redis; chat_state's part common to the chat's clients (the count, the
		// first page of users, reads, shown) is read once for all the joins that wait for it (Receipts).
		presence_->Joined(c, chat, [this, chat, weak = std::weak_ptr<Client>(c.shared_from_this())](int64_t online) {
			if (online >= 0)
				events_.Online(chat, online);
			auto live = weak.lock();
			if (live && live->IsOpen())
				receipts_->SendChatState(live, chat);
		});
	} else {
		if (!members) {
			pubsub_.Unsubscribe(channel);
			events_.Forget(chat);
		}
		presence_->Left(c, chat);
	}
}

void
Conversation::StartTicks()
{
	if (!ticks_.Active() && !stopped_)
		ticks_.Start(
		    static_cast<uint64_t>(cfg_.presence_interval), [this] { Tick(); }, static_cast<uint64_t>(cfg_.presence_interval));
}

void
Conversation::Tick()
{
	for (conv::RoomEvents::Frame &f : events_.Tick())
		Broadcast(f.chat, f.event, f.data);
	if (events_.Idle())
		ticks_.Stop();
}

void
Conversation::OnBus(int64_t chat, const std::string &payload)
{
	conv::BusEvent e;
	if (!conv::ParseEnvelope(payload, &e)) {
		hub_.ConversationCounters().CountMalformed();
		Log(Level::Verbose, "gateway: ignoring a malformed event on chat %lld's channel", static_cast<long long>(chat));
		return;
	}
	hub_.ConversationCounters().CountReceived(e.event);
	if (!conv::Forwarded(e, cfg_.service))
		return;
	nlohmann::json data = std::move(e.data);
	data["chat_id"] = chat;
	switch (e.event) {
	case conv::Event::Presence: {
		// One user appeared or left: at once as its own event, or coalesced (conv::RoomEvents' rules).
		auto m = data.find("member");
		auto present = data.find("present");
		if (m == data.end() || !m->is_string() || present == data.end() || !present->is_boolean())
			return;
		nlohmann::json users = conv::PresenceUsers({m->get<std::string>()});
		if (users.size() != 1)
			return;
		int64_t online = 0; // a gateway of an older version sends no count: the chat counts as small
		if (auto o = data.find("online"); o != data.end())
			JsonInteger(*o, &online);
		const nlohmann::json &u = users[0];
		nlohmann::json now = events_.Presence(chat, u.value("service", "") + "\t" + u.value("sub", ""), u, present->get<bool>(), online);
		if (!now.is_null())
			Broadcast(chat, "presence", now);
		StartTicks();
		return;
	}
	case conv::Event::Typing: {
		// Not to the typist's own clients: they know.
		nlohmann::json user = data.value("user", nlohmann::json::object());
		std::string service = user.value("service", ""), sub = user.value("sub", "");
		auto typing = data.find("typing");
		if (!events_.Typing(chat, service + "\t" + sub, user, typing == data.end() || !typing->is_boolean() || typing->get<bool>())) {
			StartTicks();
			return;
		}
		Broadcast(chat, "typing", data, [this, &service, &sub](const Client &c) {
			return service == cfg_.service && c.sub == sub;
		});
		return;
	}
	case conv::Event::Shown:
		data["service"] = e.service;
		Broadcast(chat, "shown", data);
		return;
	case conv::Event::Read:
	case conv::Event::Sent:
		Broadcast(chat, e.event == conv::Event::Read ? "read" : "sent", data);
		return;
	}
}

void
Conversation::Emit(Client &c, std::string_view event, const nlohmann::json &data)
{
	if (!c.IsOpen())
		return;
	hub_.EnqueueText(c, c.kind == Client::Kind::SocketIo ? SioEventText(event, data) : PlainEventText(event, data));
}

void
Conversation::Broadcast(int64_t chat, std::string_view event, const nlohmann::json &data,
                        const std::function<bool(const Client &)> &skip)
{
	const auto *members = hub_.RoomMembers(chat);
	if (!members)
		return;
	FrameRef sio, plain;
	// Enqueue may close a client that is too slow, which takes it out of the room: walk a copy.
	std::vector<Client *> clients(members->begin(), members->end());
	for (Client *c : clients) {
		if (!c->IsOpen() || (skip && skip(*c)))
			continue;
		FrameRef &f = c->kind == Client::Kind::SocketIo ? sio : plain;
		if (!f)
			f = MakeFrame(c->kind == Client::Kind::SocketIo ? SioEventText(event, data) : PlainEventText(event, data));
		hub_.Enqueue(*c, f);
	}
}

void
Conversation::Publish(int64_t chat, conv::Event e, const nlohmann::json &data, std::function<void(bool)> done)
{
	redis_.Command({"PUBLISH", ChatEventsChannel({cfg_.prefix, cfg_.redis_cluster}, chat), conv::Envelope(e, cfg_.service, data)},
	               [this, e, alive = std::weak_ptr<bool>(alive_), done = std::move(done)](const RedisValue *reply,
	                                                                                      const std::string &) {
		auto a = alive.lock();
		if (!a || !*a)
			return;
		bool taken = reply && !reply->IsError();
		hub_.ConversationCounters().CountPublished(e, taken);
		if (done)
			done(taken);
	});
}

void
Conversation::Delivered(const std::vector<InboxMessage> &messages)
{
	// One `shown` per chat and batch of messages: the senders' side marks each id. The chat's last one is kept in
	// the shown hash, for pages that load later (chat_state.shown).
	std::map<int64_t, std::pair<nlohmann::json, const InboxMessage *>> by_chat;
	for (const InboxMessage &m : messages) {
		if (m.change != Change::None) // an edit or delete: its message was shown already, or is on its way
			continue;
		auto &[list, last] = by_chat[m.chat_id];
		if (list.is_null())
			list = nlohmann::json::array();
		list.push_back({{"id", m.id}, {"seq", m.seq}, {"created_at", m.created_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.created_at)}});
		if (!last || m.seq > last->seq)
			last = &m;
	}
	for (auto &[chat, shown] : by_chat) {
		Publish(chat, conv::Event::Shown, {{"messages", std::move(shown.first)}});
		receipts_->Shown(chat, *shown.second);
	}
}

void
Conversation::Sent(const nlohmann::json &message)
{
	int64_t chat = 0;
	if (!message.is_object() || !JsonInteger(message.value("chat_id", nlohmann::json()), &chat))
		return;
	nlohmann::json m = message;
	m["seq"] = nullptr;
	m["dir"] = "out";
	Publish(chat, conv::Event::Sent, m);
}

} // namespace chat_outboxd
