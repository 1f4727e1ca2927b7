// common/relay/relay_health.hpp - Redis (shard 0) failing for every service: one of the round's
// decisions both relays make by the same code (with service_standing.hpp and shard_outage.hpp).
//
// When to log a change of Redis health (once per change, not per attempt), how long to back off,
// when a full batch means going again before sleeping. Pure, so it is tested without servers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/backoff.hpp"
#include "common/outage_cause.hpp"

namespace chat_outbox {

class RelayHealth {
  public:
	RelayHealth() : backoff_(kServerRetryFirstMs, kServerRetryMaxMs) {}

	// OnFailure records a failed round, `why` its reason as the log would name it, and returns the
	// delay before the next one. *log_it says whether to log it ("redis unreachable: <why>"): it starts
	// an outage, or its cause is new to the outage (an outage that began with a cut connection and
	// lasts for another cause, a certificate that expired meanwhile, names that cause once); otherwise
	// the outage goes on quietly (OutageCauses, common/outage_cause.hpp).
	int64_t OnFailure(std::string_view why, bool *log_it);

	// OnSuccess records a round that relayed `relayed` rows. When an outage just ended and the
	// backlog is drained (`drained`), *log_it is set and *total is the number relayed since Redis
	// came back ("redis back, relayed N"); the outage's reasons are then forgotten.
	void OnSuccess(int64_t relayed, bool drained, bool *log_it, int64_t *total);

	bool
	Failing() const
	{
		return backoff_.Failing();
	}

	bool
	Recovering() const
	{
		return recovering_;
	}

  private:
	Backoff backoff_;
	bool recovering_ = false;
	int64_t relayed_since_recovery_ = 0;
	OutageCauses causes_; // what the outage's "redis unreachable" lines named (none since the last recovery)
};

// MoreToDrain: a full batch means the outbox probably has more; go again before sleeping.
inline bool
MoreToDrain(int64_t relayed, int64_t batch_size)
{
	return relayed >= batch_size;
}

} // namespace chat_outbox
