// common/redis_sentinel.cpp - see redis_sentinel.hpp.
#include "common/redis_sentinel.hpp"

#include <hiredis/hiredis.h>

#include <cstdlib>
#include <memory>

#include "common/redis_blocking.hpp"
#include "common/redis_handshake.hpp"

namespace chat_outbox {

std::vector<std::vector<std::string>>
SentinelQueryCommands(const RedisUrl &url)
{
	std::vector<std::vector<std::string>> cmds;
	if (!url.sentinel_password.empty())
		cmds.push_back(AuthCommand(url.sentinel_username, url.sentinel_password));
	cmds.push_back({"SENTINEL", "get-master-addr-by-name", url.master_name});
	return cmds;
}

std::optional<RedisEndpoint>
MasterFromReply(bool is_nil, const std::vector<std::string> &elements, const std::string &master_name,
                std::string *error)
{
	if (is_nil) {
		*error = "does not know a master named '" + master_name + "'";
		return std::nullopt;
	}
	char *end = nullptr;
	long port = elements.size() == 2 ? std::strtol(elements[1].c_str(), &end, 10) : 0;
	if (elements.size() != 2 || elements[0].empty() || !end || *end || port < 1 || port > 65535) {
		*error = "unexpected reply to SENTINEL get-master-addr-by-name";
		return std::nullopt;
	}
	return RedisEndpoint{elements[0], static_cast<int>(port)};
}

std::vector<std::string>
MasterCheckCommand()
{
	return {"ROLE"};
}

bool
RoleIsMaster(const std::string &role)
{
	return role == "master";
}

RedisUrl
AtSentinel(const RedisUrl &url, const RedisEndpoint &sentinel)
{
	RedisUrl at;
	at.host = sentinel.host;
	at.port = sentinel.port;
	at.tls = url.tls;
	return at;
}

RedisUrl
AtMaster(const RedisUrl &url, const RedisEndpoint &master)
{
	RedisUrl u = url;
	u.host = master.host;
	u.port = master.port;
	return u;
}

namespace {

struct ReplyFree {
	void operator()(redisReply *r) const { freeReplyObject(r); }
};

std::optional<RedisEndpoint>
AskOne(const RedisUrl &url, const RedisEndpoint &sentinel, int64_t timeout_ms, std::string *error)
{
	BlockingRedis conn;
	if (!conn.Connect(AtSentinel(url, sentinel), timeout_ms)) {
		*error = conn.Error();
		return std::nullopt;
	}
	std::unique_ptr<redisReply, ReplyFree> last;
	for (const auto &argv : SentinelQueryCommands(url)) {
		last.reset(conn.Command(argv));
		if (!last) {
			*error = conn.Error();
			return std::nullopt;
		}
		if (last->type == REDIS_REPLY_ERROR) {
			*error = argv[0] + ": " + std::string(last->str, last->len);
			return std::nullopt;
		}
	}
	std::vector<std::string> elements;
	if (last->type == REDIS_REPLY_ARRAY)
		for (size_t i = 0; i < last->elements; i++)
			elements.emplace_back(last->element[i]->str ? std::string(last->element[i]->str, last->element[i]->len) : "");
	return MasterFromReply(last->type == REDIS_REPLY_NIL, elements, url.master_name, error);
}

} // namespace

std::optional<RedisEndpoint>
DiscoverMaster(const RedisUrl &url, int64_t timeout_ms, size_t *cursor, std::string *error)
{
	std::string all;
	size_t n = url.sentinels.size();
	for (size_t k = 0; k < n; k++) {
		size_t i = (*cursor + k) % n;
		const RedisEndpoint &s = url.sentinels[i];
		std::string why;
		if (auto master = AskOne(url, s, timeout_ms, &why)) {
			*cursor = i;
			return master;
		}
		all += (all.empty() ? "" : "; ") + std::string("sentinel ") + s.host + ":" + std::to_string(s.port) + ": " + why;
	}
	*error = all.empty() ? "no sentinels" : all;
	return std::nullopt;
}

} // namespace chat_outbox
