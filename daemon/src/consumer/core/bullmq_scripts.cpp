// daemon/src/consumer/core/bullmq_scripts.cpp - the consumer's BullMQ transitions as Redis runs them:
// each script of daemon/src/consumer/core/lua/ (embedded at build time) assembled with what it runs
// after. The conventions every script keeps (ARGV[1] the queue base, ARGV[2] the clock, fixed keys
// in KEYS) are in lua/helpers.lua's head; each script's KEYS, ARGV and reply in its own.
#include "consumer/core/bullmq_scripts.hpp"

#include "common/bullmq/lua_prelude.hpp"
#include "common/bullmq/queue_keys.hpp"
#include "consumer/core/lua/scripts.hpp" // built from consumer/core/lua/*.lua

namespace chat_outboxd {

namespace {

// Prelude declares QUEUE_KEY_NAMES, the names of bullmq::QueueKeyNames() (one list, one owner), as a
// Lua set, then the prelude every chat_outbox script shares, then the consumer's own helpers
// (lua/helpers.lua).
std::string
Prelude()
{
	std::string names = "local QUEUE_KEY_NAMES = {";
	for (std::string_view name : chat_outbox::bullmq::QueueKeyNames())
		names.append("['").append(name).append("'] = true, ");
	return names + "}\n" + chat_outbox::bullmq::kLuaPrelude + consumer_lua::kHelpers;
}

LuaScript
Make(const char *name, std::string source)
{
	return chat_outbox::MakeRedisScript(name, std::move(source));
}

} // namespace

const LuaScript &
FetchScript()
{
	static const LuaScript s = Make("fetch", Prelude() + consumer_lua::kFetch);
	return s;
}

const LuaScript &
CompleteScript()
{
	static const LuaScript s = Make("complete", Prelude() + consumer_lua::kFinishHelpers + consumer_lua::kComplete);
	return s;
}

const LuaScript &
FailScript()
{
	static const LuaScript s = Make("fail", Prelude() + consumer_lua::kFinishHelpers + consumer_lua::kFail);
	return s;
}

const LuaScript &
RetryScript()
{
	static const LuaScript s = Make("retry", Prelude() + consumer_lua::kFinishHelpers + consumer_lua::kRetry);
	return s;
}

const LuaScript &
ExtendLocksScript()
{
	static const LuaScript s = Make("extend-locks", Prelude() + consumer_lua::kExtendLocks);
	return s;
}

const LuaScript &
StalledCheckScript()
{
	static const LuaScript s = Make("stalled-check", Prelude() + consumer_lua::kStalledCheck);
	return s;
}

const LuaScript &
RecoverIdentityScript()
{
	static const LuaScript s = Make("recover-identity", Prelude() + consumer_lua::kRecoverIdentity);
	return s;
}

} // namespace chat_outboxd
