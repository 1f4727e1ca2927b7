// daemon/src/bus/core/bus_order.hpp - the one order in which a gateway hands inbox rows to its
// clients, whatever brought them: its own consumer, the bus, or a read of the inbox (a fill).
//
// Inbox seq is drawn and committed under the service's inbox lock, so rows commit in seq order
// and, once a row with seq s is committed, every seq below s is committed or will never exist (a
// rolled-back insert leaves a hole). Rules:
//   - a row with seq <= Last() was handed on already: dropped;
//   - seq == Last() + 1 is handed on at once, and with it the buffered rows that follow;
//   - a higher seq is a gap: the row is buffered (at most max_buffer_bytes of bodies; past that
//     the buffer is dropped and the fill reads those rows too) and, if the missing rows have not
//     come within gap_grace_ms (the bus and the consumer race by a few milliseconds), a fill
//     reads (Last(), Target()] from the inbox by seq;
//   - Notice(seq): a row the gateway must read from the inbox (a large row, or the inbox's
//     max(seq) after a resubscribe or a quiet bus): a fill up to it, at once.
// A fill's answer is the record: rows it returns are handed on in order, and a complete answer
// (fewer rows than the page) moves Last() to the fill's upper bound, holes included. So every seq
// is handed on once, in order, none skipped. Before Start (the inbox's max(seq), read when the
// gateway starts) rows are only kept; Start hands on everything from the first row seen (reading
// from the inbox what is missing up to the start), or, when none came, from the start on: older
// rows are the past, which clients read by catch-up.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "inbox/core/delivery.hpp"

namespace chat_outboxd {

class BusOrder {
  public:
	// Waiting: no start yet; InOrder: nothing missing; Grace: a gap, waiting for the missing rows
	// before filling; Retry: a fill failed and waits for its retry (or for RetryNow); Due: a fill
	// should be sent now; Filling: a fill is out.
	enum class State { Waiting,
		               InOrder,
		               Grace,
		               Retry,
		               Due,
		               Filling };

	struct Fill {
		int64_t after = 0; // read seq > after
		int64_t upto = 0;  // and seq <= upto, in seq order, at most a page
	};

	BusOrder(size_t max_buffer_bytes, int64_t gap_grace_ms) : max_bytes_(max_buffer_bytes), grace_ms_(gap_grace_ms) {}

	State GetState() const { return state_; }
	int64_t Last() const { return last_; }
	int64_t Target() const { return target_; }
	size_t BufferedBytes() const { return bytes_; }
	uint64_t Overflows() const { return overflows_; }

	// Start sets the first Last() from the inbox's max(seq) (see above); later calls are Notices.
	// Returns the rows to hand on.
	std::vector<InboxMessage> Start(int64_t high, int64_t now_ms);
	// Offer takes rows (each list in seq order) and returns those to hand on now, in order.
	std::vector<InboxMessage> Offer(std::vector<InboxMessage> rows, int64_t now_ms);
	// Notice: the inbox holds a row at seq; read up to it now if it is new.
	void Notice(int64_t seq, int64_t now_ms);
	// DueAt is when a fill will be due (state Grace or Retry), for the caller's timer.
	std::optional<int64_t> DueAt() const;
	// TakeFill returns the fill to send now, if one is due, and moves to Filling.
	std::optional<Fill> TakeFill(int64_t now_ms);
	// Filled takes a fill's answer (in seq order; complete: fewer rows than the page, so nothing else
	// is in the range) and returns the rows to hand on.
	std::vector<InboxMessage> Filled(const Fill &fill, std::vector<InboxMessage> rows, bool complete, int64_t now_ms);
	// FillFailed: the read failed; it is due again after retry_ms.
	void FillFailed(int64_t now_ms, int64_t retry_ms);
	// RetryNow: the connection the fills read on is back: a failed fill is due now, not when its retry
	// delay ends (a gap waiting its grace keeps it).
	void RetryNow(int64_t now_ms);

  private:
	void Hand(InboxMessage &&m, std::vector<InboxMessage> *out);
	void Drain(std::vector<InboxMessage> *out);
	void Buffer(InboxMessage &&m);
	// Settle picks the state after a change: InOrder, or a gap (Grace from now unless already due).
	void Settle(int64_t now_ms, bool due_now);

	size_t max_bytes_;
	int64_t grace_ms_;
	State state_ = State::Waiting;
	int64_t last_ = 0;
	int64_t target_ = 0;                // highest seq known to exist
	std::optional<int64_t> first_seen_; // lowest seq offered before Start
	int64_t due_at_ = 0;                // states Grace and Retry: when the fill becomes due
	std::map<int64_t, InboxMessage> buffer_;
	size_t bytes_ = 0;
	uint64_t overflows_ = 0;
};

} // namespace chat_outboxd
