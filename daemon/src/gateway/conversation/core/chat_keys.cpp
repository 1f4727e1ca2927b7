// daemon/src/gateway/conversation/core/chat_keys.cpp - see chat_keys.hpp.
#include "gateway/conversation/core/chat_keys.hpp"

namespace chat_outboxd {

namespace {

std::string
Root(std::string_view prefix)
{
	return std::string(prefix) + ":chat_outbox:chat:";
}

} // namespace

std::string
ChatEventsChannel(std::string_view prefix, int64_t chat)
{
	return Root(prefix) + std::to_string(chat) + ":events";
}

std::string
ChatPresenceKey(std::string_view prefix, int64_t chat)
{
	return Root(prefix) + std::to_string(chat) + ":presence";
}

std::string
ChatPresenceUsersKey(std::string_view prefix, int64_t chat)
{
	return Root(prefix) + std::to_string(chat) + ":presence_users";
}

std::string
ChatPresenceIndexKey(std::string_view prefix, int64_t chat)
{
	return Root(prefix) + std::to_string(chat) + ":presence_index";
}

std::string
ChatReadsKey(std::string_view prefix, int64_t chat)
{
	return Root(prefix) + std::to_string(chat) + ":reads";
}

std::string
ChatShownKey(std::string_view prefix, int64_t chat)
{
	return Root(prefix) + std::to_string(chat) + ":shown";
}

} // namespace chat_outboxd
