// daemon/src/net/redis_safety_check.cpp - see redis_safety_check.hpp.
#include "net/redis_safety_check.hpp"

#include <array>
#include <memory>

#include "base/log.hpp"
#include "common/partitions.hpp"
#include "common/redis_safety.hpp"

namespace chat_outboxd {

namespace {

// ConfigValue reads the value of a `CONFIG GET <name>` reply; "" when CONFIG is denied (ACL,
// renamed command on a managed Redis), which RedisSafetyWarning treats as "cannot tell". Only a
// word of lowercase letters and dashes is kept (every value of these settings is one): the value
// goes into a JSON string and a Prometheus label as it is.
std::string
ConfigValue(const RedisValue *reply)
{
	if (!reply || !reply->IsArray() || reply->elements.size() < 2)
		return "";
	const std::string &v = reply->elements[1].str;
	for (char c : v)
		if (!((c >= 'a' && c <= 'z') || c == '-'))
			return "";
	return v;
}

} // namespace

RedisSafetyChecks::RedisSafetyChecks(Metrics &metrics, size_t nshards) : metrics_(metrics), nshards_(nshards) {}

void
RedisSafetyChecks::Watch(RedisCommands &conn, size_t shard)
{
	auto owned = std::make_unique<Check>();
	owned->conn = &conn;
	owned->shard = shard;
	Check *check = owned.get();
	checks_.push_back(std::move(owned));
	conn.OnReady([this, check] { Run(*check); });
}

void
RedisSafetyChecks::Run(Check &check)
{
	static const char *const kSettings[] = {"appendonly", "maxmemory-policy", "appendfsync"};
	struct Answers {
		std::array<std::string, 3> values;
		int left = 3;
		bool lost = false;
	};
	auto answers = std::make_shared<Answers>();
	Check *c = &check;
	for (size_t i = 0; i < 3; i++)
		check.conn->Command({"CONFIG", "GET", kSettings[i]}, [this, c, answers, i](const RedisValue *r, const std::string &) {
			if (!r)
				answers->lost = true; // connection lost again: the next OnReady checks
			else
				answers->values[i] = ConfigValue(r);
			if (--answers->left == 0 && !answers->lost)
				Judge(*c, answers->values[0], answers->values[1], answers->values[2]);
		});
}

void
RedisSafetyChecks::Judge(Check &check, const std::string &appendonly, const std::string &maxmemory_policy,
                         const std::string &appendfsync)
{
	if (check.shard == 0)
		metrics_.redis_appendfsync = appendfsync;
	std::string warning = chat_outbox::RedisSafetyWarning(appendonly, maxmemory_policy);
	std::string name = chat_outbox::ShardName(check.shard, nshards_);
	if (warning != check.last_warning || check.verdict == Verdict::Unchecked) {
		if (!warning.empty())
			Log(Level::Warning, "%s is not durable: %s; run it with appendonly yes and maxmemory-policy noeviction",
			    name.c_str(), warning.c_str());
		else if (check.verdict == Verdict::NotDurable)
			Log(Level::Notice, "%s is durable again (appendonly yes, maxmemory-policy noeviction)", name.c_str());
	}
	check.last_warning = warning;
	check.verdict = warning.empty() ? Verdict::Durable : Verdict::NotDurable;
	metrics_.redis_durable = true;
	for (const auto &c : checks_)
		metrics_.redis_durable = metrics_.redis_durable && c->verdict != Verdict::NotDurable;
}

} // namespace chat_outboxd
