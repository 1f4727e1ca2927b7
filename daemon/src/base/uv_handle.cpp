// daemon/src/base/uv_handle.cpp - see uv_handle.hpp.
#include "base/uv_handle.hpp"

#include <unordered_map>

#include "base/c_boundary.hpp"

namespace chat_outboxd {

namespace uv_detail {

namespace {

// Every open box, by its handle, for CloseLeftovers. The daemon runs one loop on one thread.
std::unordered_map<const uv_handle_t *, BoxBase *> &
Registry()
{
	static std::unordered_map<const uv_handle_t *, BoxBase *> boxes;
	return boxes;
}

void
OnClosed(uv_handle_t *h) noexcept
{
	auto *box = static_cast<BoxBase *>(h->data);
	Registry().erase(h);
	box->state = BoxBase::State::Closed;
	std::vector<std::function<void()>> callbacks = std::move(box->on_closed);
	box->on_closed.clear();
	// Freed before the callbacks run: one of them may destroy the owner, which must not find it.
	if (box->owner_gone)
		delete box;
	for (auto &cb : callbacks)
		if (cb)
			CallFromC("libuv", "a close callback", cb);
}

} // namespace

void
Register(BoxBase *box)
{
	Registry()[box->Handle()] = box;
}

void
BoxBase::Close(std::function<void()> done)
{
	if (state == State::Closed) {
		if (done)
			done();
		return;
	}
	on_closed.push_back(std::move(done));
	if (state == State::Closing)
		return;
	state = State::Closing;
	uv_handle_t *h = Handle();
	h->data = this; // no callback but the close callback runs from now on
	uv_close(h, OnClosed);
}

void
BoxBase::Release()
{
	owner_gone = true;
	if (state == State::Closed)
		delete this;
}

} // namespace uv_detail

int
CloseLeftovers(uv_loop_t *loop)
{
	int closed = 0;
	uv_walk(
	    loop,
	    [](uv_handle_t *h, void *arg) noexcept {
		CallFromC("libuv", "closing a leftover handle", [h, arg] {
			if (uv_is_closing(h))
				return;
			++*static_cast<int *>(arg);
			auto &boxes = uv_detail::Registry();
			auto it = boxes.find(h);
			if (it != boxes.end())
				it->second->Close(nullptr);
			else
				uv_close(h, nullptr);
		});
	    },
	    &closed);
	return closed;
}

bool
UvPoll::Open(uv_loop_t *loop, int fd)
{
	fd_ = -1;
	if (handle_.Init([loop, fd](uv_poll_t *p) { return uv_poll_init(loop, p, fd); }) != 0)
		return false;
	handle_.get()->data = this;
	fd_ = fd;
	return true;
}

void
UvPoll::Start(int events, Callback fn)
{
	if (!handle_)
		return;
	fn_ = std::move(fn);
	uv_poll_start(handle_.get(), events, OnPoll);
}

void
UvPoll::Stop()
{
	if (handle_)
		uv_poll_stop(handle_.get());
}

void
UvPoll::Close(std::function<void()> done)
{
	fd_ = -1;
	handle_.Close(std::move(done));
}

void
UvPoll::OnPoll(uv_poll_t *h, int status, int events) noexcept
{
	auto *self = static_cast<UvPoll *>(h->data);
	CallFromC(self->who_, "a poll callback", [&] {
		Callback fn = self->fn_; // fn may Start again (replacing fn_), Close or destroy this UvPoll
		fn(status, events);
	});
}

bool
UvSignal::Start(uv_loop_t *loop, int signum, std::function<void(int)> fn)
{
	if (handle_.Init([loop](uv_signal_t *s) { return uv_signal_init(loop, s); }) != 0)
		return false;
	handle_.get()->data = this;
	fn_ = std::move(fn);
	return uv_signal_start(handle_.get(), OnSignal, signum) == 0;
}

void
UvSignal::OnSignal(uv_signal_t *h, int signum) noexcept
{
	auto *self = static_cast<UvSignal *>(h->data);
	CallFromC(self->who_, "a signal handler", [&] {
		auto fn = self->fn_;
		fn(signum);
	});
}

} // namespace chat_outboxd
