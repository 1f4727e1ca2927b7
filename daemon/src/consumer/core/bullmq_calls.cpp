// daemon/src/consumer/core/bullmq_calls.cpp - see bullmq_calls.hpp.
#include "consumer/core/bullmq_calls.hpp"

#include <nlohmann/json.hpp>

namespace chat_outboxd {

namespace {

ScriptCall
Call(const LuaScript &script, const QueueKeys &q, std::initializer_list<const char *> suffixes, int64_t now_ms)
{
	ScriptCall c;
	c.script = &script;
	for (const char *s : suffixes)
		c.keys.push_back(q.Key(s));
	c.args = {q.Base(), now_ms == kRedisClock ? std::string() : std::to_string(now_ms)};
	return c;
}

void
AddKeep(ScriptCall *c, const KeepPolicy &keep)
{
	c->args.push_back(std::to_string(keep.count));
	c->args.push_back(std::to_string(keep.age_s));
}

} // namespace

std::string
StackTrace(const std::string &line)
{
	return nlohmann::json::array({line}).dump();
}

ScriptCall
FetchCall(const QueueKeys &q, int64_t now_ms, const std::string &token_prefix, uint64_t first_n, int64_t lock_ms,
          int64_t max_jobs, const std::string &worker_name, const std::string &lease_holder)
{
	ScriptCall c = Call(FetchScript(), q,
	                    {"wait", "active", "prioritized", "delayed", "meta", "events", "marker", "pc", "limiter", "lease"},
	                    now_ms);
	c.args.insert(c.args.end(), {token_prefix, std::to_string(first_n), std::to_string(lock_ms),
	                             std::to_string(max_jobs), worker_name, lease_holder});
	return c;
}

ScriptCall
CompleteCall(const QueueKeys &q, int64_t now_ms, const std::vector<CompleteItem> &items)
{
	ScriptCall c = Call(CompleteScript(), q, {"active", "completed", "events", "meta", "stalled", "wait", "prioritized"},
	                    now_ms);
	for (const auto &it : items) {
		c.args.insert(c.args.end(), {it.id, it.token, it.returnvalue});
		AddKeep(&c, it.keep);
	}
	return c;
}

ScriptCall
FailCall(const QueueKeys &q, int64_t now_ms, const std::vector<FailItem> &items)
{
	ScriptCall c =
	    Call(FailScript(), q, {"active", "failed", "events", "meta", "stalled", "wait", "prioritized"}, now_ms);
	for (const auto &it : items) {
		c.args.insert(c.args.end(), {it.id, it.token, it.reason, StackTrace(it.reason)});
		AddKeep(&c, it.keep);
		c.args.push_back(std::to_string(it.attempts));
	}
	return c;
}

ScriptCall
RetryCall(const QueueKeys &q, int64_t now_ms, const std::vector<RetryItem> &items)
{
	ScriptCall c = Call(RetryScript(), q,
	                    {"active", "delayed", "events", "meta", "stalled", "wait", "prioritized", "marker", "pc"}, now_ms);
	for (const auto &it : items)
		c.args.insert(c.args.end(), {it.id, it.token, it.reason, StackTrace(it.reason), std::to_string(it.delay_ms),
		                             it.lifo ? "1" : "0"});
	return c;
}

ScriptCall
ExtendLocksCall(const QueueKeys &q, int64_t now_ms, int64_t lock_ms, const std::vector<HeldLock> &locks)
{
	ScriptCall c = Call(ExtendLocksScript(), q, {"stalled"}, now_ms);
	c.args.push_back(std::to_string(lock_ms));
	for (const auto &l : locks)
		c.args.insert(c.args.end(), {l.id, l.token});
	return c;
}

ScriptCall
StalledCheckCall(const QueueKeys &q, int64_t now_ms, int64_t stalled_interval_ms)
{
	const char *never = "9007199254740991"; // 2^53 - 1: the largest count a Lua number holds exactly
	ScriptCall c = Call(StalledCheckScript(), q,
	                    {"stalled", "stalled-check", "active", "wait", "events", "meta", "marker"}, now_ms);
	c.args.insert(c.args.end(), {std::to_string(stalled_interval_ms), never});
	return c;
}

ScriptCall
RecoverIdentityCall(const QueueKeys &q, int64_t now_ms, const std::string &identity, bool takeover,
                    const std::string &lease_holder)
{
	ScriptCall c =
	    Call(RecoverIdentityScript(), q, {"active", "wait", "events", "meta", "marker", "stalled", "lease"}, now_ms);
	c.args.insert(c.args.end(), {identity + ":", takeover ? "1" : "0", lease_holder});
	return c;
}

bool
IsNoLease(const std::string &error)
{
	return error.rfind("NOLEASE", 0) == 0;
}

} // namespace chat_outboxd
