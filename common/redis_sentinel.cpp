// common/redis_sentinel.cpp - see redis_sentinel.hpp.
#include "common/redis_sentinel.hpp"

#include <hiredis/hiredis.h>

#include <cstdlib>
#include <memory>

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
struct ContextFree {
	void operator()(redisContext *c) const { redisFree(c); }
};

std::optional<RedisEndpoint>
AskOne(const RedisUrl &url, const RedisEndpoint &sentinel, int64_t timeout_ms, std::string *error)
{
	struct timeval tv = {static_cast<time_t>(timeout_ms / 1000), static_cast<suseconds_t>((timeout_ms % 1000) * 1000)};
	std::unique_ptr<redisContext, ContextFree> ctx(redisConnectWithTimeout(sentinel.host.c_str(), sentinel.port, tv));
	if (!ctx || ctx->err) {
		*error = ctx ? ctx->errstr : "out of memory";
		return std::nullopt;
	}
	redisSetTimeout(ctx.get(), tv);
	std::unique_ptr<redisReply, ReplyFree> last;
	for (const auto &argv : SentinelQueryCommands(url)) {
		std::vector<const char *> args;
		std::vector<size_t> lens;
		for (const auto &a : argv) {
			args.push_back(a.data());
			lens.push_back(a.size());
		}
		last.reset(static_cast<redisReply *>(
		    redisCommandArgv(ctx.get(), static_cast<int>(args.size()), args.data(), lens.data())));
		if (!last) {
			*error = ctx->errstr[0] ? ctx->errstr : "connection closed";
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
