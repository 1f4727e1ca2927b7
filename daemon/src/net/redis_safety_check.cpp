// daemon/src/net/redis_safety_check.cpp - see redis_safety_check.hpp.
#include "net/redis_safety_check.hpp"

#include <memory>

#include "base/log.hpp"
#include "redis_safety.hpp"

namespace chat_outboxd {

namespace {

// ConfigValue reads the value of a `CONFIG GET <name>` reply; "" when CONFIG is denied (ACL,
// renamed command on a managed Redis), which RedisSafetyWarning treats as "cannot tell".
std::string
ConfigValue(const RedisValue *reply)
{
	if (!reply || !reply->IsArray() || reply->elements.size() < 2)
		return "";
	return reply->elements[1].str;
}

} // namespace

RedisSafetyCheck::RedisSafetyCheck(RedisConn &conn, Metrics &metrics) : conn_(conn), metrics_(metrics)
{
	conn_.OnReady([this] { Run(); });
}

void
RedisSafetyCheck::Run()
{
	auto appendonly = std::make_shared<std::string>();
	conn_.Command({"CONFIG", "GET", "appendonly"}, [this, appendonly](const RedisValue *reply, const std::string &) {
		*appendonly = ConfigValue(reply);
		conn_.Command({"CONFIG", "GET", "maxmemory-policy"}, [this, appendonly](const RedisValue *r, const std::string &) {
			if (!r)
				return; // connection lost again: the next OnReady checks
			std::string warning = chat_outbox::RedisSafetyWarning(*appendonly, ConfigValue(r));
			metrics_.redis_durable = warning.empty();
			if (warning != last_warning_ || !checked_) {
				if (!warning.empty())
					Log(Level::Warning, "redis is not durable: %s; run it with appendonly yes and "
					                    "maxmemory-policy noeviction", warning.c_str());
				else if (checked_)
					Log(Level::Notice, "redis is durable again (appendonly yes, maxmemory-policy noeviction)");
			}
			last_warning_ = warning;
			checked_ = true;
		});
	});
}

} // namespace chat_outboxd
