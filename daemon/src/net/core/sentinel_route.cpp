// daemon/src/net/core/sentinel_route.cpp - see sentinel_route.hpp.
#include "net/core/sentinel_route.hpp"

#include "common/redis_cluster.hpp"
#include "common/redis_handshake.hpp"
#include "common/redis_sentinel.hpp"

namespace chat_outboxd {

namespace {

// AtSentinelAs: a sentinel of url, authenticated with the sentinel credentials (none without a password)
chat_outbox::RedisUrl
AtSentinelAs(const chat_outbox::RedisUrl &url, size_t cursor)
{
	chat_outbox::RedisUrl at = chat_outbox::AtSentinel(url, url.sentinels[cursor % url.sentinels.size()]);
	at.username = url.sentinel_username;
	at.password = url.sentinel_password;
	return at;
}

} // namespace

SentinelRoute::SentinelRoute(chat_outbox::RedisUrl url)
    : kind_(url.IsSentinel() ? Kind::kSentinel : url.IsCluster() ? Kind::kCluster
                                                                 : Kind::kPlain),
      url_(std::move(url)),
      target_(url_), phase_(kind_ == Kind::kSentinel ? Phase::kAskSentinel : Phase::kMaster)
{
	if (kind_ == Kind::kCluster)
		target_ = chat_outbox::AtNode(url_, url_.cluster_nodes[0]);
}

SentinelRoute
SentinelRoute::ToSentinels(const chat_outbox::RedisUrl &url)
{
	SentinelRoute r(url);
	r.kind_ = Kind::kSentinels;
	r.phase_ = Phase::kMaster; // connected straight to its target, a sentinel
	r.target_ = AtSentinelAs(url, 0);
	return r;
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
	if (kind_ == Kind::kSentinel)
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
SentinelRoute::SwitchedAway(const MasterNews &news) const
{
	if (kind_ != Kind::kSentinel || phase_ != Phase::kMaster || master_.empty())
		return false;
	return news.name == url_.master_name && news.address != master_;
}

bool
SentinelRoute::MasterMovedError(const std::string &error)
{
	return error.rfind("READONLY", 0) == 0 || error.rfind("UNBLOCKED", 0) == 0;
}

void
SentinelRoute::Lost()
{
	if (kind_ == Kind::kCluster) { // any node serves pub/sub: the next seed node
		cursor_++;
		target_ = chat_outbox::AtNode(url_, url_.cluster_nodes[cursor_ % url_.cluster_nodes.size()]);
		return;
	}
	if (kind_ == Kind::kSentinels) { // this sentinel failed or went away: watch the next one
		target_ = AtSentinelAs(url_, ++cursor_);
		return;
	}
	if (kind_ != Kind::kSentinel)
		return;
	if (phase_ == Phase::kAskSentinel)
		cursor_++; // this sentinel failed: the next one
	phase_ = Phase::kAskSentinel;
}

} // namespace chat_outboxd
