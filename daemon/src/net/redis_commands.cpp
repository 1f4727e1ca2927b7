// daemon/src/net/redis_commands.cpp - see redis_commands.hpp: the one Eval rule of both kinds, and
// the start-up choice between them.
#include "net/redis_commands.hpp"

#include "net/cluster_conn.hpp"
#include "net/redis_conn.hpp"

namespace chat_outboxd {

void
RedisCommands::Eval(const chat_outbox::ScriptCall &call, ReplyCb cb, int64_t timeout_ms)
{
	auto fallback = std::make_shared<std::vector<std::string>>(chat_outbox::EvalArgv(call));
	Command(
	    chat_outbox::EvalShaArgv(call),
	    [this, fallback, cb = std::move(cb)](const RedisValue *r, const std::string &err) {
		if (r && r->IsError() && chat_outbox::IsNoScriptError(r->str)) {
			Command(std::move(*fallback), cb);
			return;
		}
		cb(r, err);
	    },
	    timeout_ms);
}

std::unique_ptr<RedisCommands>
MakeRedisCommands(uv_loop_t *loop, const chat_outbox::RedisUrl &url, const std::string &home_key, bool all_masters,
                  std::string role, std::string client_name, int64_t timeout_ms, StateLog *state_log,
                  SentinelWatchers *watchers)
{
	if (url.IsCluster())
		return std::make_unique<ClusterConn>(loop, url, home_key, all_masters, std::move(role), std::move(client_name),
		                                     timeout_ms, state_log);
	return std::make_unique<RedisConn>(loop, url, std::move(role), std::move(client_name), timeout_ms, state_log,
	                                   watchers);
}

} // namespace chat_outboxd
