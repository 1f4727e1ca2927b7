// daemon/src/gateway/hub/deadlines.cpp - see deadlines.hpp (and gateway/client/core/timer_heap.hpp for why not lws_sul).
#include "gateway/hub/deadlines.hpp"

#include <algorithm>

namespace chat_outboxd {

Deadlines::Deadlines(uv_loop_t *loop, std::function<void(Deadline &)> fire,
                     std::function<void(Deadline &, const std::exception &)> fire_failed)
    : loop_(loop), fire_(std::move(fire)), fire_failed_(std::move(fire_failed)),
      ticker_(std::make_unique<UvTimer>(loop, "gateway deadlines"))
{
}

void
Deadlines::ScheduleIn(Deadline &t, int64_t delay_ms)
{
	timers_.Schedule(&t, static_cast<int64_t>(uv_now(loop_)) + std::max<int64_t>(0, delay_ms));
	// Re-arm only when this deadline comes first: most reschedules (a pong pushing the next ping
	// 25 s out) leave the earliest deadline where it was and touch libuv not at all.
	if (ticker_due_ < 0 || t.due < ticker_due_)
		ArmTicker();
}

void
Deadlines::Cancel(Deadline &t)
{
	// The ticker may now fire early for nothing; OnTick re-arms it then. Cheaper than re-arming
	// on every cancel.
	timers_.Cancel(&t);
}

void
Deadlines::DropAll()
{
	// lws_context_destroy still reports each connection closed after this, and its Cancel must then
	// find an idle node, not an index into a heap that is gone: clear node by node.
	timers_.Clear();
	ticker_.reset(); // closes the libuv handle, so the loop can end
	ticker_due_ = -1;
}

void
Deadlines::ArmTicker()
{
	if (!ticker_ || timers_.Empty()) {
		if (ticker_)
			ticker_->Stop();
		ticker_due_ = -1;
		return;
	}
	ticker_due_ = timers_.NextDue();
	int64_t now = static_cast<int64_t>(uv_now(loop_));
	ticker_->Start(static_cast<uint64_t>(std::max<int64_t>(0, ticker_due_ - now)), [this] { OnTick(); });
}

void
Deadlines::OnTick()
{
	ticker_due_ = -1;
	int64_t now = static_cast<int64_t>(uv_now(loop_));
	while (TimerNode *n = timers_.PopDue(now)) {
		auto *t = static_cast<Deadline *>(n);
		try {
			fire_(*t);
		} catch (const std::exception &e) {
			fire_failed_(*t, e);
		}
	}
	ArmTicker();
}

} // namespace chat_outboxd
