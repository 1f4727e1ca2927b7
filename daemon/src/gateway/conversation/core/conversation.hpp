// daemon/src/gateway/conversation/core/conversation.hpp - the pure rules of the conversation events (history, read,
// typing, presence; docs/client-protocol.md "Conversations"): who a user is, what a request may carry, the
// error results, the per-event rates, presence members and the envelope events travel in between
// gateways, and which gateways forward which event.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace chat_outboxd::conv {

// A user is (service, sub); name is what the token's `name` claim says (empty: none).
struct User {
	std::string service, sub, name;
};
constexpr size_t kMaxNameBytes = 200;
// UsableSub: a user id (inbox/core/user_id.hpp: 1-200 bytes, no control character, so no tab, the
// presence member separator): what mark_read and send_message take as the user.
bool UsableSub(std::string_view sub);
// CleanName: the name claim if it is 1-200 bytes without a tab or NUL, else "".
std::string CleanName(std::string_view name);
nlohmann::json UserJson(const User &u); // {"service","sub","name"|null}

// Error is the {ok:false, error:{code, message}} result of a refused request.
nlohmann::json Error(std::string_view code, std::string message);
nlohmann::json RateLimited(int64_t retry_after_ms);

// Per-connection rates (a token bucket each): requests a second, burst.
struct Rate {
	int64_t per_second, burst;
};
constexpr Rate kHistoryRate{20, 40};
constexpr Rate kReadRate{5, 20};
constexpr Rate kTypingRate{2, 5};
constexpr Rate kPresenceRate{5, 10};
// A client's own joins and leaves (Hub::TakeRoomChange; the joins of its admission are free).
constexpr Rate kRoomChangeRate{10, 40};
constexpr int kMaxHistoryInFlight = 2;

// The arguments of each request; a Parse* fails with *error (for a bad_request) on anything else.
struct SentCursor {
	std::string created_at; // as the gateway printed it (ISO 8601)
	std::string id;         // message uuid
};
struct HistoryRequest {
	int64_t chat_id = 0;
	std::optional<int64_t> before_seq;     // received messages with seq below it
	std::optional<SentCursor> before_sent; // sent messages before it
	int64_t limit = 50;
};
constexpr int64_t kHistoryDefaultLimit = 50;
constexpr int64_t kHistoryMaxLimit = 200;
bool ParseChatId(const nlohmann::json &arg, int64_t *chat, std::string *error);
bool ParseHistory(const nlohmann::json &arg, HistoryRequest *out, std::string *error);
bool ParseRead(const nlohmann::json &arg, int64_t *chat, int64_t *seq, std::string *error);
bool ParseTyping(const nlohmann::json &arg, int64_t *chat, bool *typing, std::string *error);
// presence {chat_id, after?, limit?}: a page of the chat's users past `after` (the previous page's `next`, opaque to
// clients: "<service>\t<sub>", at most kPresenceAfterMaxBytes), limit 1-kPresenceMaxLimit (default kPresenceDefaultLimit).
struct PresenceRequest {
	int64_t chat_id = 0;
	std::string after; // "" from the first user
	int64_t limit = 100;
};
constexpr int64_t kPresenceDefaultLimit = 100;
constexpr int64_t kPresenceMaxLimit = 200;
constexpr size_t kPresenceAfterMaxBytes = 512;
bool ParsePresence(const nlohmann::json &arg, PresenceRequest *out, std::string *error);

// The sent-messages cursor as clients see it: "<created_at>|<id>" (opaque to them).
std::string EncodeSentCursor(const SentCursor &c);
bool DecodeSentCursor(std::string_view text, SentCursor *out);

// Presence: one sorted-set member per present client, "<service>\t<sub>\t<gateway>\t<client>\t<name>".
std::string PresenceMember(const User &u, std::string_view gateway, uint64_t client);
// PresenceUsers: the users behind members, each once (two tabs count once), sorted by service, sub.
nlohmann::json PresenceUsers(const std::vector<std::string> &members);

// Events between gateways travel as {"event":<name>,"service":<publisher's service>,"data":{...}}.
enum class Event : uint8_t { Presence,
	                         Typing,
	                         Read,
	                         Shown,
	                         Sent };
std::optional<Event> EventFromName(std::string_view name);
const char *EventName(Event e);
std::string Envelope(Event e, std::string_view service, const nlohmann::json &data);
struct BusEvent {
	Event event = Event::Presence;
	std::string service;
	nlohmann::json data;
};
bool ParseEnvelope(std::string_view text, BusEvent *out);
// Forwarded: does a gateway of `own` service pass this event on to its clients? `sent` only on the
// publisher's service, `shown` only on the others, the rest everywhere.
bool Forwarded(const BusEvent &e, std::string_view own);

} // namespace chat_outboxd::conv
