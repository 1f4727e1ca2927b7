// daemon/src/consumer/core/partition_calls.cpp - see partition_calls.hpp.
#include "consumer/core/partition_calls.hpp"

#include <algorithm>

#include "common/bullmq/queue_keys.hpp"
#include "common/partitions.hpp"
#include "consumer/core/lua/scripts.hpp" // built from consumer/core/lua/*.lua

namespace chat_outboxd {

namespace {

using chat_outbox::bullmq::QueueKey;

// Each script of lua/ once per process (its KEYS, ARGV and reply in its head): a ScriptCall points at it.
#define CHAT_OUTBOXD_SCRIPT(fn, name, source)                                                 \
	const chat_outbox::RedisScript &fn()                                                      \
	{                                                                                         \
		static const chat_outbox::RedisScript s = chat_outbox::MakeRedisScript(name, source); \
		return s;                                                                             \
	}
CHAT_OUTBOXD_SCRIPT(HeartbeatScript, "members-heartbeat", consumer_lua::kMembersHeartbeat)
CHAT_OUTBOXD_SCRIPT(LeaveScript, "members-leave", consumer_lua::kMembersLeave)
CHAT_OUTBOXD_SCRIPT(AcquireScript, "lease-acquire", consumer_lua::kLeaseAcquire)
CHAT_OUTBOXD_SCRIPT(RenewScript, "lease-renew", consumer_lua::kLeaseRenew)
CHAT_OUTBOXD_SCRIPT(ReleaseScript, "lease-release", consumer_lua::kLeaseRelease)
#undef CHAT_OUTBOXD_SCRIPT

ScriptCall
Make(const chat_outbox::RedisScript &script, std::vector<std::string> keys, std::vector<std::string> args)
{
	ScriptCall c;
	c.script = &script;
	c.keys = std::move(keys);
	c.args = std::move(args);
	return c;
}

} // namespace

ScriptCall
HeartbeatCall(const std::string &prefix, const std::string &queue, const std::string &identity, int64_t member_ttl_ms)
{
	return Make(HeartbeatScript(), {QueueKey(prefix, queue, "members"), chat_outbox::LayoutKey(prefix, queue)},
	            {identity, std::to_string(member_ttl_ms)});
}

ScriptCall
LeaveCall(const std::string &prefix, const std::string &queue, const std::string &identity)
{
	return Make(LeaveScript(), {QueueKey(prefix, queue, "members")}, {identity});
}

ScriptCall
AcquireCall(const std::string &prefix, const std::string &partition_queue, const std::string &holder, int64_t ttl_ms)
{
	return Make(AcquireScript(), {QueueKey(prefix, partition_queue, "lease")},
	            {holder, std::to_string(ttl_ms)});
}

ScriptCall
RenewCall(const std::string &prefix, const std::string &partition_queue, const std::string &holder, int64_t ttl_ms)
{
	return Make(RenewScript(), {QueueKey(prefix, partition_queue, "lease")}, {holder, std::to_string(ttl_ms)});
}

ScriptCall
ReleaseCall(const std::string &prefix, const std::string &partition_queue, const std::string &holder)
{
	return Make(ReleaseScript(), {QueueKey(prefix, partition_queue, "lease")}, {holder});
}

bool
DecodeHeartbeat(const RedisValue &reply, Heartbeat *out, std::string *error)
{
	*out = Heartbeat();
	if (reply.IsError()) {
		*error = reply.str;
		return false;
	}
	if (!reply.IsArray() || reply.elements.size() != 2 || !reply.elements[0].IsArray()) {
		*error = "members heartbeat: malformed reply";
		return false;
	}
	for (const RedisValue &m : reply.elements[0].elements) {
		if (m.type != RedisValue::Type::String) {
			*error = "members heartbeat: malformed reply";
			return false;
		}
		out->members.push_back(m.str);
	}
	std::sort(out->members.begin(), out->members.end());
	const RedisValue &layout = reply.elements[1];
	if (layout.type == RedisValue::Type::String)
		out->layout = layout.str;
	else if (!layout.IsNil()) {
		*error = "members heartbeat: malformed reply";
		return false;
	}
	return true;
}

std::optional<AcquireResult>
DecodeAcquire(const RedisValue &reply)
{
	if (reply.type != RedisValue::Type::Integer || reply.integer > 1)
		return std::nullopt;
	if (reply.integer == 1)
		return AcquireResult{true, 0};
	return AcquireResult{false, -reply.integer};
}

std::optional<bool>
DecodeFlag(const RedisValue &reply)
{
	if (reply.type != RedisValue::Type::Integer || (reply.integer != 0 && reply.integer != 1))
		return std::nullopt;
	return reply.integer == 1;
}

bool
ParsePartitionList(const std::string &text, std::vector<int64_t> *out, std::string *error)
{
	out->clear();
	size_t i = 0;
	while (i < text.size()) {
		char c = text[i];
		if (c == ',' || c == ' ' || c == '\t') {
			i++;
			continue;
		}
		int64_t v = 0;
		size_t start = i;
		while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 6)
			v = v * 10 + (text[i++] - '0');
		if (i == start || (i < text.size() && text[i] != ',' && text[i] != ' ' && text[i] != '\t')) {
			*error = "--leave-partitions must list partition numbers separated by ',' or spaces, got '" + text + "'";
			return false;
		}
		if (std::find(out->begin(), out->end(), v) == out->end())
			out->push_back(v);
	}
	return true;
}

} // namespace chat_outboxd
