// common/relay/shard_outage.cpp - one Redis shard's outage (see shard_outage.hpp).
#include "common/relay/shard_outage.hpp"

#include "common/backoff.hpp"
#include "common/relay/cpp_only.hpp"

namespace chat_outbox {

bool
ShardOutage::Failed(int64_t now_ms) noexcept
{
	bool starts = state_ == ShardState::kUp;
	state_ = ShardState::kDown;
	until_ms_ = now_ms + Backoff(kServerRetryFirstMs, kServerRetryMaxMs).Delay(failures_);
	failures_++;
	return starts;
}

bool
ShardOutage::Back() noexcept
{
	bool ends = state_ == ShardState::kDown;
	*this = ShardOutage{};
	return ends;
}

} // namespace chat_outbox
