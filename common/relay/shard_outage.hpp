// common/relay/shard_outage.hpp - one Redis shard's outage, for a shard other than shard 0: while it
// is down the partitions on it wait in the outbox and the other shards' partitions are relayed. Shard
// 0 holds the layout keys, so its failure is every service's (relay_health.hpp), as with one Redis.
// Both relays decide by it (extension/src/pg/redis_sink.cpp and relay/src/relay_loop.cpp).
//
// Rules: a down shard is not tried again before its backoff ends (kServerRetryFirstMs doubling to
// kServerRetryMaxMs, common/backoff.hpp); the outage is logged once when it starts and once when it
// ends, never per attempt. Pure (the caller passes its time in ms) and noexcept.
#pragma once

#include <cstdint>

namespace chat_outbox {

enum class ShardState : uint8_t {
	kUp,
	kDown, // failed; tried again once its backoff ends
};

class ShardOutage {
  public:
	// Failed records a failure of the shard (a connect, a command) and starts or extends its
	// backoff. Returns true when this failure starts the outage: log it.
	bool Failed(int64_t now_ms) noexcept;

	// Back records the shard answering again. Returns true when that ends an outage: log it.
	bool Back() noexcept;

	// Due: whether the shard may be tried at `now_ms`: it is up, or down with its backoff over.
	bool
	Due(int64_t now_ms) const noexcept
	{
		return state_ == ShardState::kUp || now_ms >= until_ms_;
	}

	ShardState
	State() const noexcept
	{
		return state_;
	}

	bool
	Down() const noexcept
	{
		return state_ == ShardState::kDown;
	}

  private:
	ShardState state_ = ShardState::kUp;
	int32_t failures_ = 0; // in a row
	int64_t until_ms_ = 0; // while down: not tried again before
};

} // namespace chat_outbox
