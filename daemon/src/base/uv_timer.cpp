// daemon/src/base/uv_timer.cpp - see uv_timer.hpp.
#include "base/uv_timer.hpp"

#include "base/c_boundary.hpp"

namespace chat_outboxd {

UvTimer::UvTimer(uv_loop_t *loop, const char *name) : name_(name)
{
	if (handle_.Init([loop](uv_timer_t *t) { return uv_timer_init(loop, t); }) == 0)
		handle_.get()->data = this;
}

void
UvTimer::OnTimer(uv_timer_t *t) noexcept
{
	auto *self = static_cast<UvTimer *>(t->data);
	CallFromC(self->name_, "a timer callback", [self] {
		auto fn = self->fn_; // fn may re-Start the timer (replacing fn_), close or destroy it
		if (fn)
			fn();
	});
}

void
UvTimer::Start(uint64_t ms, std::function<void()> fn, uint64_t repeat_ms)
{
	if (!handle_)
		return;
	fn_ = std::move(fn);
	uv_timer_start(handle_.get(), OnTimer, ms, repeat_ms);
}

void
UvTimer::Stop()
{
	if (handle_)
		uv_timer_stop(handle_.get());
}

bool
UvTimer::Active() const
{
	return handle_ && uv_is_active(reinterpret_cast<const uv_handle_t *>(handle_.get()));
}

void
UvTimer::Close(std::function<void()> done)
{
	fn_ = nullptr;
	handle_.Close(std::move(done));
}

} // namespace chat_outboxd
