// common/relay/service_standing.hpp - one service's standing in a relay's rounds: relaying, failing
// on its own, or waiting (for a change of its partition count, for a shard that is down), and when
// its next pass may run. Both relays decide by it (extension/src/pg/relay_worker.cpp and
// relay/src/relay_loop.cpp); they only log, record and time what it says.
//
// Rules: one service failing (its SQL, a queue Redis refuses, a row the batch encoder refuses) never
// holds back the others; it backs off as every server retry does (kServerRetryFirstMs doubling to
// kServerRetryMaxMs, common/backoff.hpp); it is logged once, when the failure starts, never per
// attempt, and the status view shows its current reason (written when the reason changes); a pass
// that goes through ends the failure (logged once: "relays again", the status view cleared). A wait is not a failure: no log, no backoff, a look again after a
// fixed delay. Pure (no clock: the caller passes its time in ms), noexcept, and a plain value: the
// extension keeps it in a C struct it clears with memset, so all-zero is a service that relays.
#pragma once

#include <cstdint>
#include <string_view>

namespace chat_outbox {

// kLayoutRecheckMs: a service whose change of partition count waits for the old queues to empty
// looks again this much later (the change goes through at the first look that finds them empty).
inline constexpr int64_t kLayoutRecheckMs = 200;
// kShardDownRecheckMs: a service whose pass needs a shard that is down (a change of the count needs
// every shard of the old layout) looks again this much later; the shard's own backoff is ShardOutage's.
inline constexpr int64_t kShardDownRecheckMs = 200;

// FailureNews: what a failed pass changes in what is known about the service's failure.
enum class FailureNews : uint8_t {
	kStarted,       // the failure starts: log it, record its reason
	kReasonChanged, // it goes on for another reason: record the new reason (no log line)
	kSame,          // it goes on for the same reason: nothing to say
};

enum class ServiceState : uint8_t {
	kRelaying,         // the last pass went through (or none ran yet)
	kFailing,          // its own failure: backing off
	kWaitingForLayout, // a change of its partition count waits for the old queues
	kWaitingForShard,  // its pass needs a shard that is down
};

class ServiceStanding {
  public:
	// Due: whether a pass of this service may run at `now_ms`.
	bool
	Due(int64_t now_ms) const noexcept
	{
		return now_ms >= retry_at_ms_;
	}

	// Failed records a pass that failed by this service's own fault, and backs it off. Returns what
	// that tells (FailureNews).
	FailureNews Failed(std::string_view reason, int64_t now_ms) noexcept;

	// Worked records a pass that went through. Returns true when it ends a failure: log "relays
	// again" and clear the status view's error.
	bool Worked() noexcept;

	// WaitForLayout: the pass found its change of partition count waiting for the old queues
	// (rolled back, nothing written); the next look is kLayoutRecheckMs later.
	void WaitForLayout(int64_t now_ms) noexcept;

	// ShardFailed: a shard other than shard 0 failed during the pass (rolled back). Returns true when
	// the next pass goes at once: the shard was up when the pass started, so the next pass leaves its
	// partitions out. A shard that was down already (the pass needed it anyway: a change of the count
	// needs every shard of the old layout): false, and the next look is kShardDownRecheckMs later.
	bool ShardFailed(bool shard_was_up, int64_t now_ms) noexcept;

	ServiceState
	State() const noexcept
	{
		return state_;
	}

	// Failures: this service's own failures in a row. A wait does not end the run: only a pass that
	// went through does.
	int64_t
	Failures() const noexcept
	{
		return failures_;
	}

	// RetryAtMs: the time (the caller's clock) before which no pass runs; 0 for none.
	int64_t
	RetryAtMs() const noexcept
	{
		return retry_at_ms_;
	}

  private:
	// No member initialisers: all-zero is the initial state (see the head), and the type stays trivial.
	ServiceState state_;
	int32_t failures_;
	uint64_t reason_hash_; // of the failure last reported, to tell a changed reason from the same one
	int64_t retry_at_ms_;
};

} // namespace chat_outbox
