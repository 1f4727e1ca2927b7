// daemon/src/gateway/conversation/core/chat_keys.hpp - the Redis names of a chat's conversation state, shared by the
// gateways of every service in the conversation (docs/gateway.md, "Across gateways and services").
// This is their one home: both sides must spell them alike. On a Redis Cluster (ChatKeyForm::cluster) the
// chat id in a key is a hash tag, "{<chat>}", so a script on the chat's presence keys runs on one master;
// channels are not keys and keep one form (the daemon uses classic pub/sub on a cluster).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chat_outboxd {

// ChatKeyForm: the prefix (--prefix) and whether the keys are spelt for a Redis Cluster.
struct ChatKeyForm {
	std::string_view prefix;
	bool cluster = false;
};

// <prefix>:chat_outbox:chat:<chat>:events - pub/sub channel of the chat's events.
std::string ChatEventsChannel(const ChatKeyForm &form, int64_t chat);
// <prefix>:chat_outbox:chat:<chat>:presence - sorted set of present clients, score = expiry (ms).
std::string ChatPresenceKey(const ChatKeyForm &form, int64_t chat);
// <prefix>:chat_outbox:chat:<chat>:presence_users - hash: each present user's count of members.
std::string ChatPresenceUsersKey(const ChatKeyForm &form, int64_t chat);
// <prefix>:chat_outbox:chat:<chat>:presence_index - sorted set (score 0) of the present users, "<service>\t<sub>":
// the order presence pages are read in.
std::string ChatPresenceIndexKey(const ChatKeyForm &form, int64_t chat);
// <prefix>:chat_outbox:chat:<chat>:reads - hash of every user's last read cursor.
std::string ChatReadsKey(const ChatKeyForm &form, int64_t chat);
// <prefix>:chat_outbox:chat:<chat>:shown - hash of the last message each service's gateways pushed.
std::string ChatShownKey(const ChatKeyForm &form, int64_t chat);

} // namespace chat_outboxd
