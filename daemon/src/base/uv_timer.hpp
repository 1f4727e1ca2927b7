// daemon/src/base/uv_timer.hpp - a libuv timer that calls a std::function.
//
// Owned through UvHandle (uv_handle.hpp): the owner may be destroyed at any time while the loop
// runs (the destructor closes the handle once), and the callback runs through CallFromC, so no C++
// exception crosses libuv's C frames.
#pragma once

#include <cstdint>
#include <functional>

#include <uv.h>

#include "base/uv_handle.hpp"

namespace chat_outboxd {

class UvTimer {
  public:
	// name appears in logs; it must outlive the timer (a string literal).
	UvTimer(uv_loop_t *loop, const char *name);
	UvTimer(const UvTimer &) = delete;
	UvTimer &operator=(const UvTimer &) = delete;

	// Start (re)arms the timer: fn runs after ms, then every repeat_ms if non-zero. fn may Start,
	// Stop, Close or destroy this timer.
	void Start(uint64_t ms, std::function<void()> fn, uint64_t repeat_ms = 0);
	void Stop();
	bool Active() const;
	// Close stops the timer for good; done (optional) runs once libuv released the handle (at once
	// when it was closed already).
	void Close(std::function<void()> done = nullptr);

  private:
	static void OnTimer(uv_timer_t *t) noexcept;
	const char *name_;
	std::function<void()> fn_;
	UvHandle<uv_timer_t> handle_;
};

} // namespace chat_outboxd
