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
		int64_t d = current_ ? current_ : initial_ms_;
		current_ = std::min<int64_t>(d * 2, max_ms_);
		failures_++;
		return std::min<int64_t>(d, max_ms_);
	}

	// Reset is called after a success; Failing() then turns false.
	void
	Reset()
	{
		current_ = 0;
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
	int64_t current_ = 0;
	int64_t failures_ = 0;
};

} // namespace chat_outbox
