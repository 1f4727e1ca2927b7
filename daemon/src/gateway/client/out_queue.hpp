// daemon/src/gateway/client/out_queue.hpp - OutQueue: a client's outbound frames, counted in bytes
// (the Hub keeps each client within --client-queue-bytes by it).
#pragma once

#include <cstddef>
#include <vector>

#include "gateway/client/frame.hpp"

namespace chat_outboxd {

// OutQueue is a FIFO that holds no allocation while empty (idle sockets must stay small). It counts
// the text bytes it holds: a frame shared by a room counts in full for every socket that queues it,
// so one client's budget does not depend on what the others do.
class OutQueue {
  public:
	void Push(FrameRef f)
	{
		bytes_ += f->Text().size();
		items_.push_back(std::move(f));
	}
	bool Empty() const { return head_ == items_.size(); }
	size_t Size() const { return items_.size() - head_; }
	size_t Bytes() const { return bytes_; }
	const Frame &Front() const { return *items_[head_]; }
	FrameRef Pop();
	void Clear();

  private:
	std::vector<FrameRef> items_;
	size_t head_ = 0;
	size_t bytes_ = 0;
};

} // namespace chat_outboxd
