// daemon/src/gateway/http/head_reader.hpp - the gateway's listening sockets: accepts each connection and reads
// its request head before libwebsockets sees it, because libwebsockets 4.1 closes a connection whose
// head it cannot store, or whose target holds a percent-encoded NUL, without a word. What the head
// scan refuses (gateway/http/core/http_request.hpp: ScanHead) is answered here, 431 or 400, and a head not
// in by the deadline 408; a connection whose head is whole is handed on with the head still unread.
//
// Bounds: kMaxHeadBytes looked at per connection (in one buffer per listener: a head stays in the
// kernel's socket buffer until it is whole), kMaxPendingHeads connections at once (past that the
// listener waits and the kernel's backlog holds new ones), kHeadTimeoutMs for a head to arrive.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include <uv.h>

#include "base/uv_handle.hpp"
#include "base/uv_timer.hpp"
#include "gateway/http/core/http_request.hpp"

namespace chat_outboxd {

class HeadReader {
  public:
	static constexpr size_t kMaxPendingHeads = 1024;
	static constexpr uint64_t kHeadTimeoutMs = 20000;
	// After an answer the connection is read and dropped for a while (at most kDrainBytes, kDrainMs)
	// before it is closed: closing it with the client's bytes unread would reset it, and the client
	// could lose the answer.
	static constexpr size_t kDrainBytes = 1 << 20;
	static constexpr uint64_t kDrainMs = 2000;

	// Handoff takes a connection whose head is whole and unread; it owns fd from then on. It runs on
	// the loop, in the poll callback that saw the head's end.
	using Handoff = std::function<void(int fd)>;

	// name (a string literal) names the listener in logs: "--listen", "--metrics-listen".
	HeadReader(uv_loop_t *loop, const char *name);
	~HeadReader();
	HeadReader(const HeadReader &) = delete;
	HeadReader &operator=(const HeadReader &) = delete;

	// Start accepts on listen_fd (a listening socket, owned from then on); false, not owned, if libuv
	// refuses it.
	bool Start(int listen_fd, Handoff handoff);
	// Close stops accepting, closes the listening socket and every connection not handed on yet.
	void Close();

  private:
	struct Pending;
	enum class ListenState : uint8_t { Accepting,
		                               Full,
		                               Failing,
		                               Closed };

	void OnAcceptable();
	void SetListenState(ListenState s, const char *why = nullptr);
	// OnReadable and Answer: true while p is still here (waiting for more, or draining), false when it
	// was handed on or closed (p is gone).
	bool OnReadable(Pending &p, int events);
	bool Answer(Pending &p, int status, const char *reason, const char *body);
	void Drop(Pending &p);
	void OnTick();

	uv_loop_t *loop_;
	const char *name_;
	int listen_fd_ = -1;
	Handoff handoff_;
	UvPoll listen_poll_;
	UvTimer tick_;
	UvTimer retry_;
	ListenState listen_state_ = ListenState::Closed;
	uint64_t full_logged_at_ = 0; // uv_now() of the last "full" line, 0: none yet
	uint64_t times_full_ = 0;     // since that line
	std::map<Pending *, std::unique_ptr<Pending>> pending_;
	std::array<char, http::kMaxHeadBytes> scratch_; // what the last peek saw
};

} // namespace chat_outboxd
