// relay/src/core/wake_recheck.hpp - look again after a logical wake-up that found nothing.
//
// Postgres flushes a commit's WAL record before it makes the transaction visible to new snapshots
// (the commit record is durable first, the procarray entry is cleared after), and the walsender
// streams up to the flushed WAL. So the relay can hear a COMMIT from the stream and run its claim
// before that transaction's rows are visible: the claim finds nothing, and without another wake-up
// the rows would wait for the poll interval. The rule: a pass that followed a stream wake-up and
// claimed nothing is repeated after 1, 2, 4 ... 512 ms and then every second, at most kTries times
// (about 10 s in all: a synchronous standby's answer, or a busy machine, can hold a commit invisible
// for seconds); any pass that claims something, or any other wake-up, ends the look. An empty look
// costs one claim that finds nothing. NOTIFY needs none of this:
// it is delivered only after the sender's transaction is visible.
#pragma once

#include <cstdint>

#include "common/backoff.hpp"

namespace chat_outbox::relay {

class WakeRecheck {
  public:
	static constexpr int kTries = 19;

	// AfterPass: the pass that just ran followed a stream wake-up (woken_by_stream) and claimed
	// `claimed` rows. Returns the delay before the next look in ms, or -1 for none (wait as usual).
	int64_t
	AfterPass(bool woken_by_stream, int64_t claimed)
	{
		if (claimed > 0 || (!woken_by_stream && !looking_)) {
			Stop();
			return -1;
		}
		if (woken_by_stream && !looking_) {
			looking_ = true;
			backoff_.Reset();
		}
		if (backoff_.Failures() >= kTries) {
			Stop();
			return -1;
		}
		return backoff_.Next();
	}

	// Looking: the next pass is a look again, not a new wake-up.
	bool
	Looking() const
	{
		return looking_;
	}

	void
	Stop()
	{
		looking_ = false;
		backoff_.Reset();
	}

  private:
	bool looking_ = false;
	Backoff backoff_{1, 1000};
};

} // namespace chat_outbox::relay
