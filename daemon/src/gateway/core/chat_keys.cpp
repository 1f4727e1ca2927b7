// daemon/src/gateway/core/chat_keys.cpp - see chat_keys.hpp.
#include "gateway/core/chat_keys.hpp"

#include <charconv>

namespace chat_outboxd {

namespace {

std::string
Root(std::string_view prefix)
{
	return std::string(prefix) + ":chat_outbox:chat:";
}

constexpr std::string_view kEvents = ":events";

} // namespace

std::string
ChatEventsChannel(std::string_view prefix, int64_t chat)
{
	return Root(prefix) + std::to_string(chat) + std::string(kEvents);
}

std::string
ChatEventsPattern(std::string_view prefix)
{
	std::string out;
	for (char c : Root(prefix)) {
		if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\')
			out += '\\';
		out += c;
	}
	return out + "*" + std::string(kEvents);
}

bool
ChatOfEventsChannel(std::string_view prefix, std::string_view channel, int64_t *chat)
{
	std::string root = Root(prefix);
	if (channel.size() <= root.size() + kEvents.size() || channel.substr(0, root.size()) != root ||
	    channel.substr(channel.size() - kEvents.size()) != kEvents)
		return false;
	std::string_view digits = channel.substr(root.size(), channel.size() - root.size() - kEvents.size());
	auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *chat);
	return ec == std::errc() && end == digits.data() + digits.size() && std::to_string(*chat) == digits;
}

std::string
ChatPresenceKey(std::string_view prefix, int64_t chat)
{
	return Root(prefix) + std::to_string(chat) + ":presence";
}

std::string
ChatReadsKey(std::string_view prefix, int64_t chat)
{
	return Root(prefix) + std::to_string(chat) + ":reads";
}

} // namespace chat_outboxd
