// daemon/src/net/core/sentinel_watch.cpp - see sentinel_watch.hpp.
#include "net/core/sentinel_watch.hpp"

#include <sstream>

namespace chat_outboxd {

std::string
SentinelWatch::Key(const chat_outbox::RedisUrl &url)
{
	std::string key = url.tls.enabled ? "tls " : "tcp ";
	for (const auto &s : url.sentinels)
		key += s.host + ":" + std::to_string(s.port) + ",";
	// the credentials decide which sentinels' ACL user the watch is: URLs with others get a watch of their own
	return key + " " + url.sentinel_username + "\n" + url.sentinel_password;
}

std::optional<MasterNews>
SentinelWatch::Announcement(const std::string &channel, const std::string &payload)
{
	std::istringstream in(payload);
	std::vector<std::string> w;
	for (std::string word; in >> word;)
		w.push_back(word);
	if (channel == "+switch-master" && w.size() == 5)
		return MasterNews{w[0], w[3] + ":" + w[4], channel};
	if (channel == "+promoted-slave" && w.size() == 8 && w[0] == "slave" && w[4] == "@")
		return MasterNews{w[5], w[2] + ":" + w[3], channel};
	return std::nullopt;
}

std::vector<std::string>
SentinelWatch::AskCommand(const std::string &name)
{
	return {"SENTINEL", "get-master-addr-by-name", name};
}

std::optional<MasterNews>
SentinelWatch::Answer(const std::string &name, const RedisValue &reply)
{
	if (reply.type != RedisValue::Type::Array || reply.elements.size() != 2 || reply.elements[0].str.empty() ||
	    reply.elements[1].str.empty())
		return std::nullopt;
	return MasterNews{name, reply.elements[0].str + ":" + reply.elements[1].str, "get-master-addr-by-name"};
}

std::string
SentinelWatch::Up(const std::string &sentinel)
{
	if (state_ == State::kWatching && sentinel == watched_)
		return "";
	std::string line = "watching sentinel " + sentinel + " for new masters";
	if (state_ == State::kLost && sentinel != watched_)
		line += " (moved from " + watched_ + ")";
	state_ = State::kWatching;
	watched_ = sentinel;
	return line;
}

std::string
SentinelWatch::Down(const std::string &sentinel, const std::string &why)
{
	if (state_ == State::kLost)
		return "";
	std::string line = "lost the watch on sentinel " + sentinel + " (" + why + "), moving to the next sentinel";
	if (state_ == State::kIdle)
		line = "cannot watch sentinel " + sentinel + " (" + why + "), trying the next sentinel";
	state_ = State::kLost;
	watched_ = sentinel;
	return line;
}

} // namespace chat_outboxd
