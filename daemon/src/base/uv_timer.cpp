// daemon/src/base/uv_timer.cpp - see uv_timer.hpp.
#include "base/uv_timer.hpp"

#include "base/log.hpp"

namespace chat_outboxd {

struct UvTimer::State {
	uv_timer_t timer;
	const char *name;
	std::function<void()> fn, done;
	bool closed = false;

	static void OnTimer(uv_timer_t *t) noexcept
	{
		auto *s = static_cast<State *>(t->data);
		try {
			if (s->fn) {
				auto fn = s->fn; // fn may re-Start the timer and replace s->fn
				fn();
			}
		} catch (const std::exception &e) {
			Log(Level::Warning, "timer %s: %s", s->name, e.what());
		} catch (...) {
			Log(Level::Warning, "timer %s: unknown exception", s->name);
		}
	}

	static void OnClose(uv_handle_t *h) noexcept
	{
		auto *s = static_cast<State *>(h->data);
		try {
			if (s->done)
				s->done();
		} catch (...) {
			Log(Level::Warning, "timer %s: exception in close callback", s->name);
		}
		delete s;
	}
};

UvTimer::UvTimer(uv_loop_t *loop, const char *name) : state_(new State)
{
	state_->name = name;
	uv_timer_init(loop, &state_->timer);
	state_->timer.data = state_;
}

UvTimer::~UvTimer()
{
	Close();
}

void
UvTimer::Start(uint64_t ms, std::function<void()> fn, uint64_t repeat_ms)
{
	if (state_->closed)
		return;
	state_->fn = std::move(fn);
	uv_timer_start(&state_->timer, State::OnTimer, ms, repeat_ms);
}

void
UvTimer::Stop()
{
	if (!state_->closed)
		uv_timer_stop(&state_->timer);
}

bool
UvTimer::Active() const
{
	return !state_->closed && uv_is_active(reinterpret_cast<const uv_handle_t *>(&state_->timer));
}

void
UvTimer::Close(std::function<void()> done)
{
	if (state_->closed) {
		if (done)
			done();
		return;
	}
	state_->closed = true;
	state_->done = std::move(done);
	state_->fn = nullptr;
	uv_close(reinterpret_cast<uv_handle_t *>(&state_->timer), State::OnClose);
}

} // namespace chat_outboxd
