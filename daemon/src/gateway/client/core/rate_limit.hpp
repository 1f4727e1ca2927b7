// daemon/src/gateway/client/core/rate_limit.hpp - a token bucket for per-connection request rates.
//
// A connection may make `burst` requests at once; tokens come back at `rate` per second, so a
// steady sender gets `rate` a second and an idle one builds up to `burst` again. Time is passed in
// (milliseconds on the caller's clock), so the rule is testable without sleeping.
#pragma once

#include <algorithm>
#include <cstdint>

namespace chat_outboxd {

class TokenBucket {
  public:
	// Take spends one token; false when none is left (the request must be refused).
	bool Take(int64_t now_ms, int64_t rate, int64_t burst)
	{
		Refill(now_ms, rate, burst);
		if (milli_tokens_ < 1000)
			return false;
		milli_tokens_ -= 1000;
		return true;
	}

	// RetryAfterMs is how long until the next token, after a refused Take.
	int64_t RetryAfterMs(int64_t rate) const
	{
		int64_t missing = 1000 - std::min<int64_t>(milli_tokens_, 1000);
		return (missing + rate - 1) / std::max<int64_t>(rate, 1);
	}

  private:
	void Refill(int64_t now_ms, int64_t rate, int64_t burst)
	{
		if (last_ms_ < 0) {
			milli_tokens_ = burst * 1000; // a new connection starts with a full bucket
		} else if (now_ms > last_ms_) {
			milli_tokens_ = std::min(burst * 1000, milli_tokens_ + (now_ms - last_ms_) * rate);
		}
		last_ms_ = std::max(last_ms_, now_ms);
	}

	int64_t milli_tokens_ = 0; // thousandths of a token: exact at any rate up to 1000/s per ms
	int64_t last_ms_ = -1;
};

} // namespace chat_outboxd
