// daemon/src/gateway/conversation/core/chat_keys.cpp - see chat_keys.hpp.
#include "gateway/conversation/core/chat_keys.hpp"

namespace chat_outboxd {

namespace {

std::string
Root(const ChatKeyForm &form, int64_t chat)
{
	std::string id = std::to_string(chat);
	return std::string(form.prefix) + ":chat_outbox:chat:" + (form.cluster ? "{" + id + "}" : id);
}

} // namespace

std::string
ChatEventsChannel(const ChatKeyForm &form, int64_t chat)
{
	return Root({form.prefix}, chat) + ":events";
}

std::string
ChatPresenceKey(const ChatKeyForm &form, int64_t chat)
{
	return Root(form, chat) + ":presence";
}

std::string
ChatPresenceUsersKey(const ChatKeyForm &form, int64_t chat)
{
	return Root(form, chat) + ":presence_users";
}

std::string
ChatPresenceIndexKey(const ChatKeyForm &form, int64_t chat)
{
	return Root(form, chat) + ":presence_index";
}

std::string
ChatReadsKey(const ChatKeyForm &form, int64_t chat)
{
	return Root(form, chat) + ":reads";
}

std::string
ChatShownKey(const ChatKeyForm &form, int64_t chat)
{
	return Root(form, chat) + ":shown";
}

} // namespace chat_outboxd
