// daemon/src/net/redis_safety_check.cpp - see redis_safety_check.hpp.
#include "net/redis_safety_check.hpp"

#include <array>
#include <memory>

#include "base/log.hpp"
#include "redis_safety.hpp"

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

RedisSafetyCheck::RedisSafetyCheck(RedisConn &conn, Metrics &metrics) : conn_(conn), metrics_(metrics)
{
	conn_.OnReady([this] { Run(); });
}

void
RedisSafetyCheck::Run()
{
	static const char *const kSettings[] = {"appendonly", "maxmemory-policy", "appendfsync"};
	struct Answers {
		std::array<std::string, 3> values;
		int left = 3;
		bool lost = false;
	};
	auto answers = std::make_shared<Answers>();
	for (size_t i = 0; i < 3; i++)
		conn_.Command({"CONFIG", "GET", kSettings[i]}, [this, answers, i](const RedisValue *r, const std::string &) {
			if (!r)
				answers->lost = true; // connection lost again: the next OnReady checks
			else
				answers->values[i] = ConfigValue(r);
			if (--answers->left == 0 && !answers->lost)
				Judge(answers->values[0], answers->values[1], answers->values[2]);
		});
}

void
RedisSafetyCheck::Judge(const std::string &appendonly, const std::string &maxmemory_policy,
                        const std::string &appendfsync)
{
	metrics_.redis_appendfsync = appendfsync;
	std::string warning = chat_outbox::RedisSafetyWarning(appendonly, maxmemory_policy);
	metrics_.redis_durable = warning.empty();
	if (warning != last_warning_ || !checked_) {
		if (!warning.empty())
			Log(Level::Warning, "redis is not durable: %s; run it with appendonly yes and maxmemory-policy noeviction",
			    warning.c_str());
		else if (checked_)
			Log(Level::Notice, "redis is durable again (appendonly yes, maxmemory-policy noeviction)");
	}
	last_warning_ = warning;
	checked_ = true;
}

} // namespace chat_outboxd
