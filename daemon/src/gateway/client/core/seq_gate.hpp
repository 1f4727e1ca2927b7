// daemon/src/gateway/client/core/seq_gate.hpp - per-socket ordering of catch-up replay and live pushes.
//
// Inbox seq grows with delivery order, so one number per socket, the highest seq already sent,
// is enough to send every message once: anything at or below it is a duplicate. While the catch-up
// query runs, live messages are held back and released after the replayed rows, so the client sees
// seq order with no duplicates between replay and live pushes.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace chat_outboxd {

template <typename Item>
class SeqGate {
  public:
	explicit SeqGate(int64_t highest_sent = 0) : highest_(highest_sent) {}

	int64_t Highest() const { return highest_; }
	bool Replaying() const { return replaying_; }
	void BeginReplay() { replaying_ = true; }

	// Live returns true when the caller should send the item now. During a replay the item is kept
	// (Finish hands it back); duplicates are dropped.
	bool Live(int64_t seq, Item item)
	{
		if (replaying_) {
			held_.emplace_back(seq, std::move(item));
			return false;
		}
		return Take(seq);
	}

	// Take marks a replayed (or live) seq as sent; false when it was already sent.
	bool Take(int64_t seq)
	{
		if (seq <= highest_)
			return false;
		highest_ = seq;
		return true;
	}

	// DropHeld forgets the live items held so far; the replay goes on (the caller must make it read
	// them again from the source of the replay, since a later Finish no longer has them).
	void DropHeld()
	{
		held_.clear();
		held_.shrink_to_fit();
	}

	// Abandon ends a replay without sending anything (the client is being closed).
	void Abandon()
	{
		replaying_ = false;
		held_.clear();
		held_.shrink_to_fit();
	}

	// Finish ends the replay and returns the held live items that are still new, in order.
	std::vector<Item> Finish()
	{
		replaying_ = false;
		std::vector<Item> out;
		for (auto &h : held_)
			if (Take(h.first))
				out.push_back(std::move(h.second));
		held_.clear();
		held_.shrink_to_fit();
		return out;
	}

  private:
	int64_t highest_;
	bool replaying_ = false;
	std::vector<std::pair<int64_t, Item>> held_;
};

} // namespace chat_outboxd
