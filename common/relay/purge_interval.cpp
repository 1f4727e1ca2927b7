// common/relay/purge_interval.cpp - see purge_interval.hpp.
#include "common/relay/purge_interval.hpp"

#include <algorithm>

namespace chat_outbox {

int64_t
PurgeIntervalMs(int64_t retention_s, int64_t inbox_retention_s) noexcept
{
	int64_t shorter = retention_s > 0 && inbox_retention_s > 0 ? std::min(retention_s, inbox_retention_s)
	                                                           : std::max<int64_t>({retention_s, inbox_retention_s, 0});
	if (shorter == 0)
		return kPurgeEveryMaxMs;
	// capped before the product, so a retention of years cannot overflow it
	return std::clamp<int64_t>(std::min<int64_t>(shorter, kPurgeEveryMaxMs / 500) * 500, kPurgeEveryMinMs, kPurgeEveryMaxMs);
}

} // namespace chat_outbox
