// common/redis_safety.cpp - see redis_safety.hpp.
#include "common/redis_safety.hpp"

namespace chat_outbox {

std::string
RedisSafetyWarning(const RedisDurability &d)
{
	std::string w;
	auto add = [&w](const std::string &s) {
		if (!w.empty())
			w += "; ";
		w += s;
	};
	if (!d.appendonly.empty() && d.appendonly != "yes")
		add("appendonly is \"" + d.appendonly + "\": jobs waiting in Redis are lost when it restarts");
	else if (d.appendfsync == "no")
		add("appendfsync is \"no\": an OS crash or power loss loses the jobs of the last ~30 s");
	if (!d.maxmemory_policy.empty() && d.maxmemory_policy != "noeviction")
		add("maxmemory-policy is \"" + d.maxmemory_policy + "\": Redis may evict queued jobs");
	return w;
}

std::string
RedisSafetyWarning(const std::string &appendonly, const std::string &maxmemory_policy)
{
	return RedisSafetyWarning(RedisDurability{appendonly, "", maxmemory_policy});
}

} // namespace chat_outbox
