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

namespace chat_outbox {

class RelayHealth {
  public:
	RelayHealth() : backoff_(kServerRetryFirstMs, kServerRetryMaxMs) {}

	// OnFailure records a failed round, `why` its reason as the log would name it, and returns the
	// delay before the next one. *log_it says whether to log it ("redis unreachable: <why>"): it starts
	// an outage, or its cause is not the one last logged (an outage that began with a cut connection
	// and lasts for another cause, a certificate that expired meanwhile, names that cause); otherwise
	// the outage goes on quietly. The cause is OutageCause(why): which node or step met it (a cluster's
	// masters one after another, its slot map) is no new cause.
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
	std::string logged_; // the cause the last "redis unreachable" line named ("" none since the last recovery)
};

// OutageCause: a failure's reason without where it was met: its last part after ": " ("redis cluster:
// master 127.0.0.1:7001: connect: TLS: server certificate verify failed: certificate has expired" ->
// "certificate has expired"), the whole reason when it has none.
std::string_view OutageCause(std::string_view why);

// MoreToDrain: a full batch means the outbox probably has more; go again before sleeping.
inline bool
MoreToDrain(int64_t relayed, int64_t batch_size)
{
	return relayed >= batch_size;
}

} // namespace chat_outbox
