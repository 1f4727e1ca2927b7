// daemon/src/gateway/conversation/core/chat_keys.hpp - the Redis names of a chat's conversation state, shared by the
// gateways of every service in the conversation (docs/gateway.md, "Across gateways and services").
// This is their one home: both sides must spell them alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chat_outboxd {

// <prefix>:chat_outbox:chat:<chat>:events - pub/sub channel of the chat's events.
std::string ChatEventsChannel(std::string_view prefix, int64_t chat);
// <prefix>:chat_outbox:chat:<chat>:presence - sorted set of present clients, score = expiry (ms).
std::string ChatPresenceKey(std::string_view prefix, int64_t chat);
// <prefix>:chat_outbox:chat:<chat>:presence_users - hash: each present user's count of members.
std::string ChatPresenceUsersKey(std::string_view prefix, int64_t chat);
// <prefix>:chat_outbox:chat:<chat>:presence_index - sorted set (score 0) of the present users, "<service>\t<sub>":
// the order presence pages are read in.
std::string ChatPresenceIndexKey(std::string_view prefix, int64_t chat);
// <prefix>:chat_outbox:chat:<chat>:reads - hash of every user's last read cursor.
std::string ChatReadsKey(std::string_view prefix, int64_t chat);
// <prefix>:chat_outbox:chat:<chat>:shown - hash of the last message each service's gateways pushed.
std::string ChatShownKey(std::string_view prefix, int64_t chat);

} // namespace chat_outboxd
