// daemon/src/base/uv_timer.hpp - a libuv timer that calls a std::function.
//
// The callback runs behind a noexcept trampoline that logs and swallows exceptions, so no C++
// exception crosses libuv's C frames. The uv handle lives on the heap until its close callback,
// so the owner may be destroyed as soon as Close() was called.
#pragma once

#include <cstdint>
#include <functional>

#include <uv.h>

namespace chat_outboxd {

class UvTimer {
  public:
	UvTimer(uv_loop_t *loop, const char *name);
	~UvTimer();
	UvTimer(const UvTimer &) = delete;
	UvTimer &operator=(const UvTimer &) = delete;

	// Start (re)arms the timer: fn runs after ms, then every repeat_ms if non-zero.
	void Start(uint64_t ms, std::function<void()> fn, uint64_t repeat_ms = 0);
	void Stop();
	bool Active() const;
	// Close stops the timer for good; done (optional) runs once libuv released the handle.
	void Close(std::function<void()> done = nullptr);

  private:
	struct State;
	State *state_;
};

} // namespace chat_outboxd
