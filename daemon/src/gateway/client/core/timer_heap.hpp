// daemon/src/gateway/client/core/timer_heap.hpp - the gateway's per-connection deadlines (heartbeat, pong,
// token expiry, upgrade probe) in one binary min-heap, driven by a single loop timer.
//
// lws' own scheduler (lws_sul_*) keeps a sorted linked list: each insert walks it from the head,
// and a new heartbeat is due after every earlier one, so with 10,000 sockets every connect and
// every pong cost a walk over ~10,000 entries. Here a reschedule is O(log n) and allocates nothing
// (the heap holds pointers to nodes embedded in their owners).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace chat_outboxd {

// TimerNode is embedded in its owner; the owner must Cancel it before it dies.
struct TimerNode {
	static constexpr uint32_t kIdle = std::numeric_limits<uint32_t>::max();
	int64_t due = 0;        // ms, on the caller's clock
	uint32_t index = kIdle; // position in the heap, kIdle when not scheduled
	bool Scheduled() const { return index != kIdle; }
};

class TimerHeap {
  public:
	// Schedule (re)arms n for due: an armed node moves, an idle one is added.
	void Schedule(TimerNode *n, int64_t due)
	{
		if (n->Scheduled()) {
			int64_t old = n->due;
			n->due = due;
			if (due < old)
				Up(n->index);
			else
				Down(n->index);
			return;
		}
		n->due = due;
		n->index = static_cast<uint32_t>(heap_.size());
		heap_.push_back(n);
		Up(n->index);
	}

	void Cancel(TimerNode *n)
	{
		if (!n->Scheduled())
			return;
		size_t i = n->index;
		n->index = TimerNode::kIdle;
		TimerNode *last = heap_.back();
		heap_.pop_back();
		if (last == n)
			return;
		Place(i, last);
		Up(i);
		Down(last->index);
	}

	// PopDue removes and returns the earliest node if it is due at now, else null.
	TimerNode *PopDue(int64_t now)
	{
		if (heap_.empty() || heap_.front()->due > now)
			return nullptr;
		TimerNode *n = heap_.front();
		Cancel(n);
		return n;
	}

	// Clear drops every deadline; each node becomes idle, so its owner may still Cancel it later.
	void Clear()
	{
		for (TimerNode *n : heap_)
			n->index = TimerNode::kIdle;
		heap_.clear();
	}

	bool Empty() const { return heap_.empty(); }
	// NextDue is the earliest due time; only meaningful when !Empty().
	int64_t NextDue() const { return heap_.front()->due; }
	size_t Size() const { return heap_.size(); }

  private:
	void Place(size_t i, TimerNode *n)
	{
		heap_[i] = n;
		n->index = static_cast<uint32_t>(i);
	}
	void Up(size_t i)
	{
		TimerNode *n = heap_[i];
		while (i > 0) {
			size_t parent = (i - 1) / 2;
			if (heap_[parent]->due <= n->due)
				break;
			Place(i, heap_[parent]);
			i = parent;
		}
		Place(i, n);
	}
	void Down(size_t i)
	{
		TimerNode *n = heap_[i];
		size_t size = heap_.size();
		for (;;) {
			size_t child = 2 * i + 1;
			if (child >= size)
				break;
			if (child + 1 < size && heap_[child + 1]->due < heap_[child]->due)
				child++;
			if (heap_[child]->due >= n->due)
				break;
			Place(i, heap_[child]);
			i = child;
		}
		Place(i, n);
	}

	std::vector<TimerNode *> heap_;
};

} // namespace chat_outboxd
