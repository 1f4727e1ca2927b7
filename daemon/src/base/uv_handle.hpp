// daemon/src/base/uv_handle.hpp - the one way the daemon owns a libuv handle.
//
// libuv keeps a pointer to every handle until the handle's close callback has run, and aborts when
// a handle is closed twice. UvHandle<H> holds these rules so no caller repeats them:
// - the handle lives on the heap, in a box freed only when libuv has released it AND its owner has
//   let go of it, so an owner may be destroyed at any time while the loop runs;
// - Close runs uv_close at most once per handle, whoever asks (the owner, its destructor, or
//   CloseLeftovers at exit); `done` runs once libuv has released the handle;
// - CloseAll closes several handles and counts their close callbacks: its `done` runs after the last.
// UvTimer (uv_timer.hpp), UvPoll and UvSignal below add a std::function callback, run through
// CallFromC. Handles we do not own (libwebsockets' own) are closed by their library.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <uv.h>

namespace chat_outboxd {

namespace uv_detail {

// Box holds one handle and the state shared by its owner and libuv's close callback.
struct BoxBase {
	virtual ~BoxBase() = default;
	virtual uv_handle_t *Handle() = 0;
	enum class State { Open,
		               Closing,
		               Closed } state = State::Open;
	bool owner_gone = false; // the owner released it: free at the close callback
	std::vector<std::function<void()>> on_closed;

	// Close asks libuv to close the handle unless that was asked already; done runs when closed.
	void Close(std::function<void()> done);
	// Release is the owner letting go (after Close): the box is freed now if libuv is done with it.
	void Release();
};

template <typename H>
struct Box final : BoxBase {
	H handle{};
	uv_handle_t *Handle() override { return reinterpret_cast<uv_handle_t *>(&handle); }
};

// Register records a freshly initialised box so CloseLeftovers can close it through its owner.
void Register(BoxBase *box);

} // namespace uv_detail

template <typename H>
class UvHandle {
  public:
	UvHandle() = default;
	~UvHandle() { Close(); }
	UvHandle(const UvHandle &) = delete;
	UvHandle &operator=(const UvHandle &) = delete;

	// Init closes a previous handle, allocates a new one and runs init on it (e.g.
	// [loop](uv_timer_t *t) { return uv_timer_init(loop, t); }). A failed init keeps nothing.
	template <typename InitFn>
	int Init(InitFn &&init)
	{
		Close();
		auto box = std::make_unique<uv_detail::Box<H>>();
		int rc = init(&box->handle);
		if (rc != 0)
			return rc;
		box_ = box.release();
		uv_detail::Register(box_);
		return 0;
	}

	// get is the handle while it is open and not closing, else null.
	H *get() const { return box_ && box_->state == uv_detail::BoxBase::State::Open ? &box_->handle : nullptr; }
	explicit operator bool() const { return get() != nullptr; }

	// Close closes the handle (once) and lets go of it; done runs after libuv released it, at once
	// when there is no handle. The owner may Init a new handle right after.
	void Close(std::function<void()> done = nullptr)
	{
		uv_detail::Box<H> *b = std::exchange(box_, nullptr);
		if (!b) {
			if (done)
				done();
			return;
		}
		b->Close(std::move(done));
		b->Release();
	}

  private:
	uv_detail::Box<H> *box_ = nullptr;
};

// CloseAll closes each owner (anything with Close(std::function<void()>)) and runs done once, after
// the last one's handles are released.
template <typename... Owners>
void
CloseAll(std::function<void()> done, Owners &...owners)
{
	auto left = std::make_shared<size_t>(sizeof...(owners));
	auto one = [left, done = std::move(done)] {
		if (--*left == 0 && done)
			done();
	};
	(owners.Close(one), ...);
}

// CloseLeftovers closes every handle still open on loop (the loop has stopped; nothing should be
// left): ours through their box, so their owners never close them again; others with uv_close.
// Returns how many it closed.
int CloseLeftovers(uv_loop_t *loop);

// UvPoll watches one file descriptor; the callback gets libuv's status and events.
class UvPoll {
  public:
	using Callback = std::function<void(int status, int events)>;
	explicit UvPoll(const char *who) : who_(who) {}
	UvPoll(const UvPoll &) = delete;
	UvPoll &operator=(const UvPoll &) = delete;

	// Open closes any previous watch and watches fd; false when libuv refuses it.
	bool Open(uv_loop_t *loop, int fd);
	bool IsOpen() const { return static_cast<bool>(handle_); }
	int Fd() const { return IsOpen() ? fd_ : -1; }
	// Start (re)arms the watch for events; the callback may Close or destroy this UvPoll.
	void Start(int events, Callback fn);
	void Stop();
	void Close(std::function<void()> done = nullptr);

  private:
	static void OnPoll(uv_poll_t *h, int status, int events) noexcept;
	const char *who_;
	int fd_ = -1;
	Callback fn_;
	UvHandle<uv_poll_t> handle_;
};

// UvSignal runs a callback on a signal.
class UvSignal {
  public:
	explicit UvSignal(const char *who) : who_(who) {}
	UvSignal(const UvSignal &) = delete;
	UvSignal &operator=(const UvSignal &) = delete;

	bool Start(uv_loop_t *loop, int signum, std::function<void(int signum)> fn);
	void Close(std::function<void()> done = nullptr) { handle_.Close(std::move(done)); }

  private:
	static void OnSignal(uv_signal_t *h, int signum) noexcept;
	const char *who_;
	std::function<void(int)> fn_;
	UvHandle<uv_signal_t> handle_;
};

} // namespace chat_outboxd
