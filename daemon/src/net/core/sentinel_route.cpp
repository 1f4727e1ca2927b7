// daemon/src/net/core/sentinel_route.cpp - see sentinel_route.hpp.
#include "net/core/sentinel_route.hpp"

#include "common/redis_cluster.hpp"
#include "common/redis_handshake.hpp"
#include "common/redis_sentinel.hpp"

#include <sstream>

namespace chat_outboxd {

SentinelRoute::SentinelRoute(chat_outbox::RedisUrl url)
    : url_(std::move(url)), target_(url_), phase_(url_.IsSentinel() ? Phase::kAskSentinel : Phase::kMaster)
{
	if (url_.IsCluster())
		target_ = chat_outbox::AtNode(url_, url_.cluster_nodes[0]);
}

chat_outbox::RedisUrl
SentinelRoute::Next() const
{
	if (phase_ == Phase::kMaster)
		return target_;
	return chat_outbox::AtSentinel(url_, url_.sentinels[cursor_ % url_.sentinels.size()]);
}

std::vector<std::vector<std::string>>
SentinelRoute::Commands() const
{
	if (phase_ == Phase::kAskSentinel)
		return chat_outbox::SentinelQueryCommands(url_);
	std::vector<std::vector<std::string>> cmds = chat_outbox::HandshakeCommands(target_);
	if (url_.IsSentinel())
		cmds.push_back(chat_outbox::MasterCheckCommand());
	return cmds;
}

bool
SentinelRoute::Found(const RedisValue &reply, std::string *why, std::string *notice)
{
	if (reply.IsError()) {
		*why = "sentinel refused: " + reply.str;
		return false;
	}
	std::vector<std::string> elements;
	for (const auto &e : reply.elements)
		elements.push_back(e.str);
	auto m = chat_outbox::MasterFromReply(reply.IsNil(), elements, url_.master_name, why);
	if (!m) {
		*why = "sentinel " + *why;
		return false;
	}
	std::string found = m->host + ":" + std::to_string(m->port);
	if (found != master_)
		*notice = "redis master '" + url_.master_name + "' is at " + found + (master_.empty() ? "" : ", was " + master_);
	master_ = found;
	target_ = chat_outbox::AtMaster(url_, *m);
	phase_ = Phase::kMaster;
	return true;
}

bool
SentinelRoute::RoleOk(const RedisValue &reply)
{
	if (!reply.elements.empty() && chat_outbox::RoleIsMaster(reply.elements[0].str))
		return true;
	cursor_++; // that sentinel is stale: ask the next one
	return false;
}

bool
SentinelRoute::SwitchedAway(const std::string &channel, const std::string &payload) const
{
	if (!url_.IsSentinel() || phase_ != Phase::kMaster || master_.empty())
		return false;
	std::istringstream in(payload);
	std::vector<std::string> w;
	for (std::string word; in >> word;)
		w.push_back(word);
	std::string name, host, port; // our master's name and where the message says it is now
	if (channel == "+switch-master" && w.size() == 5) {
		name = w[0], host = w[3], port = w[4];
	} else if (channel == "+promoted-slave" && w.size() == 8 && w[0] == "slave" && w[4] == "@") {
		name = w[5], host = w[2], port = w[3];
	} else {
		return false;
	}
	return name == url_.master_name && host + ":" + port != master_;
}

bool
SentinelRoute::MasterMovedError(const std::string &error)
{
	return error.rfind("READONLY", 0) == 0 || error.rfind("UNBLOCKED", 0) == 0;
}

void
SentinelRoute::Lost()
{
	if (url_.IsCluster()) { // any node serves pub/sub: the next seed node
		cursor_++;
		target_ = chat_outbox::AtNode(url_, url_.cluster_nodes[cursor_ % url_.cluster_nodes.size()]);
		return;
	}
	if (!url_.IsSentinel())
		return;
	if (phase_ == Phase::kAskSentinel)
		cursor_++; // this sentinel failed: the next one
	phase_ = Phase::kAskSentinel;
}

} // namespace chat_outboxd
