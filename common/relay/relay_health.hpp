// common/relay/relay_health.hpp - Redis (shard 0) failing for every service: one of the round's
// decisions both relays make by the same code (with service_standing.hpp and shard_outage.hpp).
//
// When to log a change of Redis health (once per change, not per attempt), how long to back off,
// when a full batch means going again before sleeping. Pure, so it is tested without servers.
#pragma once

#include <cstdint>
#include <string>

#include "common/backoff.hpp"

namespace chat_outbox {

class RelayHealth {
  public:
	RelayHealth() : backoff_(kServerRetryFirstMs, kServerRetryMaxMs) {}

	// OnFailure records a failed round and returns the delay before the next one. *log_it says
	// whether this failure starts an outage (log "redis unreachable") or continues one (stay quiet).
	int64_t OnFailure(bool *log_it);

	// OnSuccess records a round that relayed `relayed` rows. When an outage just ended and the
	// backlog is drained (`drained`), *log_it is set and *total is the number relayed since Redis
	// came back ("redis back, relayed N").
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
};

// MoreToDrain: a full batch means the outbox probably has more; go again before sleeping.
inline bool
MoreToDrain(int64_t relayed, int64_t batch_size)
{
	return relayed >= batch_size;
}

} // namespace chat_outbox
