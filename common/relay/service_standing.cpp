// common/relay/service_standing.cpp - one service's standing in a relay's rounds (see service_standing.hpp).
#include "common/relay/service_standing.hpp"

#include "common/backoff.hpp"
#include "common/relay/cpp_only.hpp"

namespace chat_outbox {

namespace {

// ReasonHash: FNV-1a, never 0 (0 is "no failure reported").
uint64_t
ReasonHash(std::string_view reason) noexcept
{
	uint64_t h = 14695981039346656037ull;
	for (unsigned char c : reason)
		h = (h ^ c) * 1099511628211ull;
	return h == 0 ? 1 : h;
}

} // namespace

FailureNews
ServiceStanding::Failed(std::string_view reason, int64_t now_ms) noexcept
{
	uint64_t hash = ReasonHash(reason);
	FailureNews news = failures_ == 0         ? FailureNews::kStarted
	                   : hash != reason_hash_ ? FailureNews::kReasonChanged
	                                          : FailureNews::kSame;
	state_ = ServiceState::kFailing;
	reason_hash_ = hash;
	retry_at_ms_ = now_ms + Backoff(kServerRetryFirstMs, kServerRetryMaxMs).Delay(failures_);
	failures_++;
	return news;
}

bool
ServiceStanding::Worked() noexcept
{
	bool ended = failures_ > 0;
	*this = ServiceStanding{};
	return ended;
}

void
ServiceStanding::WaitForLayout(int64_t now_ms) noexcept
{
	state_ = ServiceState::kWaitingForLayout;
	retry_at_ms_ = now_ms + kLayoutRecheckMs;
}

bool
ServiceStanding::ShardFailed(bool shard_was_up, int64_t now_ms) noexcept
{
	if (shard_was_up)
		return true;
	state_ = ServiceState::kWaitingForShard;
	retry_at_ms_ = now_ms + kShardDownRecheckMs;
	return false;
}

} // namespace chat_outbox
