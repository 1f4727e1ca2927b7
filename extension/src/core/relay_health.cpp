// extension/src/core/relay_health.cpp - relay health decisions (see relay_health.hpp).
#include "core/relay_health.hpp"

#include "core/cpp_only.hpp"

namespace chat_outbox {

int64_t
RelayHealth::OnFailure(bool *log_it)
{
	*log_it = !backoff_.Failing() && !recovering_;
	recovering_ = false;
	return backoff_.Next();
}

void
RelayHealth::OnSuccess(int64_t relayed, bool drained, bool *log_it, int64_t *total)
{
	*log_it = false;
	*total = 0;
	if (backoff_.Failing()) {
		backoff_.Reset();
		recovering_ = true;
		relayed_since_recovery_ = 0;
	}
	if (!recovering_)
		return;
	relayed_since_recovery_ += relayed;
	if (drained) {
		*log_it = true;
		*total = relayed_since_recovery_;
		recovering_ = false;
	}
}

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
