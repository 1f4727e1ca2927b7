// common/redis_safety.cpp - see redis_safety.hpp.
#include "redis_safety.hpp"

namespace chat_outbox {

std::string
RedisSafetyWarning(const std::string &appendonly, const std::string &maxmemory_policy)
{
	std::string w;
	if (!appendonly.empty() && appendonly != "yes")
		w = "appendonly is \"" + appendonly + "\": jobs waiting in Redis are lost when it restarts";
	if (!maxmemory_policy.empty() && maxmemory_policy != "noeviction") {
		if (!w.empty())
			w += "; ";
		w += "maxmemory-policy is \"" + maxmemory_policy + "\": Redis may evict queued jobs";
	}
	return w;
}

} // namespace chat_outbox
