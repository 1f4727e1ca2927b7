// common/relay/relay_health.cpp - relay health decisions (see relay_health.hpp).
#include "common/relay/relay_health.hpp"

#include "common/relay/cpp_only.hpp"

namespace chat_outbox {

int64_t
RelayHealth::OnFailure(std::string_view why, bool *log_it)
{
	if (!backoff_.Failing() && !recovering_)
		causes_.Clear(); // an outage starts
	*log_it = causes_.Note(why);
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
		causes_.Clear();
	}
}

} // namespace chat_outbox
