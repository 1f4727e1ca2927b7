// daemon/src/gateway/hub/deadlines.hpp - every deadline of the gateway (heartbeats, pong deadlines, token
// expiry, upgrade probes, /ws keepalives) in one min-heap (gateway/client/core/timer_heap.hpp) on one libuv timer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <uv.h>

#include "base/uv_timer.hpp"
#include "gateway/client/client.hpp"
#include "gateway/client/core/timer_heap.hpp"

namespace chat_outboxd {

class Deadlines {
  public:
	// fire runs for each deadline that is due, earliest first; an exception from it is fire_failed's
	// to answer (the deadline is already off the heap).
	Deadlines(uv_loop_t *loop, std::function<void(Deadline &)> fire,
	          std::function<void(Deadline &, const std::exception &)> fire_failed);

	// ScheduleIn (re)arms d for delay_ms from now; O(log n), no allocation.
	void ScheduleIn(Deadline &d, int64_t delay_ms);
	void Cancel(Deadline &d);
	// DropAll forgets every deadline and closes the libuv timer, so the loop can end (shutdown).
	void DropAll();

  private:
	void ArmTicker();
	void OnTick();

	uv_loop_t *loop_;
	std::function<void(Deadline &)> fire_;
	std::function<void(Deadline &, const std::exception &)> fire_failed_;
	TimerHeap timers_;
	std::unique_ptr<UvTimer> ticker_; // armed for the heap's earliest deadline
	int64_t ticker_due_ = -1;         // what the ticker is armed for, -1 when idle
};

} // namespace chat_outboxd
