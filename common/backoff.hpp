// common/backoff.hpp - capped exponential backoff shared by every retry loop.
//
// Retry loops in the relay and the daemon back off from `initial_ms` doubling up to `max_ms`,
// and log only when their state changes (up -> down, down -> up). Backoff keeps the delay;
// the caller keeps the log state, so this stays pure and testable without clocks.
#pragma once

#include <algorithm>
#include <cstdint>

namespace chat_outbox {

class Backoff {
  public:
	Backoff(int64_t initial_ms = 50, int64_t max_ms = 5000) : initial_ms_(initial_ms), max_ms_(max_ms) {}

	// Next returns the delay before the next attempt and doubles it for the one after.
	int64_t
	Next()
	{
		return Delay(failures_++);
	}

	// Delay is the delay after `failures` failures in a row, for a caller whose count outlives this
	// object (the relay keeps it in shared memory across restarts of its process).
	int64_t
	Delay(int64_t failures) const
	{
		int64_t d = initial_ms_;
		for (int64_t i = 0; i < failures && d < max_ms_; i++)
			d *= 2;
		return std::min<int64_t>(d, max_ms_);
	}

	// Reset is called after a success; Failing() then turns false.
	void
	Reset()
	{
		failures_ = 0;
	}

	bool
	Failing() const
	{
		return failures_ > 0;
	}

	int64_t
	Failures() const
	{
		return failures_;
	}

  private:
	int64_t initial_ms_;
	int64_t max_ms_;
	int64_t failures_ = 0;
};

// Every retry of a server that failed back off from 50 ms to 1 s: chat-outboxd's connections to
// Redis and its inbox write retry, the relays' Redis batches (a service, a shard); the Postgres
// connections cap lower (kPostgresRetryMaxMs). After a failover each is back within a second of the new
// server answering (docs/ha.md, "Timings"), and an attempt on a server that is down costs one
// refused connect.
inline constexpr int64_t kServerRetryFirstMs = 50;
inline constexpr int64_t kServerRetryMaxMs = 1000;

// A Postgres connection (chat-outboxd's, chat-outbox-relay's) backs off from kServerRetryFirstMs to
// only 250 ms: after a primary's loss the new primary is found within a quarter of a second of its
// accepting writes, where the 1 s cap left the daemons 0.3-1.0 s behind it, a silence every client
// felt (docs/ha.md, "What happens at a failover"). An attempt while no primary is there costs little:
// HAProxy closes the connection at once, a host of a list refuses it (or libpq's
// target_session_attrs turns a standby away after its handshake).
inline constexpr int64_t kPostgresRetryMaxMs = 250;

} // namespace chat_outbox
