// daemon/src/bus/core/bus_order.cpp - see bus_order.hpp.
#include "bus/core/bus_order.hpp"

#include <algorithm>

namespace chat_outboxd {

std::vector<InboxMessage>
BusOrder::Start(int64_t high, int64_t now_ms)
{
	std::vector<InboxMessage> out;
	if (state_ != State::Waiting) {
		Notice(high, now_ms);
		return out;
	}
	// Rows that came before the start are handed on from the first of them: clients connected then
	// were promised them. Everything up to high is committed, so a gap below it is filled at once.
	last_ = first_seen_ ? std::min(high, *first_seen_ - 1) : high;
	target_ = std::max(target_, high);
	state_ = State::InOrder;
	Drain(&out);
	Settle(now_ms, true);
	return out;
}

std::vector<InboxMessage>
BusOrder::Offer(std::vector<InboxMessage> rows, int64_t now_ms)
{
	std::vector<InboxMessage> out;
	for (InboxMessage &m : rows) {
		target_ = std::max(target_, m.seq);
		if (state_ == State::Waiting) {
			first_seen_ = std::min(first_seen_.value_or(m.seq), m.seq);
			Buffer(std::move(m));
			continue;
		}
		if (m.seq <= last_)
			continue;
		if (m.seq == last_ + 1) {
			Hand(std::move(m), &out);
			Drain(&out);
		} else {
			Buffer(std::move(m));
		}
	}
	if (state_ != State::Waiting)
		Settle(now_ms, false);
	return out;
}

void
BusOrder::Notice(int64_t seq, int64_t now_ms)
{
	target_ = std::max(target_, seq);
	if (state_ != State::Waiting)
		Settle(now_ms, true);
}

std::optional<int64_t>
BusOrder::DueAt() const
{
	if (state_ == State::Grace || state_ == State::Retry)
		return due_at_;
	if (state_ == State::Due)
		return 0;
	return std::nullopt;
}

std::optional<BusOrder::Fill>
BusOrder::TakeFill(int64_t now_ms)
{
	if ((state_ == State::Grace || state_ == State::Retry) && now_ms >= due_at_)
		state_ = State::Due;
	if (state_ != State::Due)
		return std::nullopt;
	state_ = State::Filling;
	return Fill{last_, target_};
}

std::vector<InboxMessage>
BusOrder::Filled(const Fill &fill, std::vector<InboxMessage> rows, bool complete, int64_t now_ms)
{
	std::vector<InboxMessage> out;
	for (InboxMessage &m : rows)
		if (m.seq > last_ && m.seq <= fill.upto)
			Hand(std::move(m), &out);
	if (complete)
		last_ = std::max(last_, fill.upto);
	Drain(&out);
	state_ = State::InOrder;
	// What is still missing was already waited for: read on at once.
	Settle(now_ms, true);
	return out;
}

void
BusOrder::FillFailed(int64_t now_ms, int64_t retry_ms)
{
	state_ = State::Retry;
	due_at_ = now_ms + retry_ms;
	Settle(now_ms, false);
}

void
BusOrder::RetryNow(int64_t now_ms)
{
	if (state_ == State::Retry)
		due_at_ = now_ms;
}

void
BusOrder::Hand(InboxMessage &&m, std::vector<InboxMessage> *out)
{
	last_ = m.seq;
	out->push_back(std::move(m));
}

// Drain drops buffered rows at or below Last() and hands on those that follow it without a gap.
void
BusOrder::Drain(std::vector<InboxMessage> *out)
{
	while (!buffer_.empty()) {
		auto it = buffer_.begin();
		if (it->first > last_ + 1)
			break;
		bytes_ -= it->second.body.size();
		if (it->first == last_ + 1)
			Hand(std::move(it->second), out);
		buffer_.erase(it);
	}
}

void
BusOrder::Buffer(InboxMessage &&m)
{
	if (buffer_.count(m.seq))
		return;
	bytes_ += m.body.size();
	buffer_.emplace(m.seq, std::move(m));
	if (bytes_ > max_bytes_) {
		// The fill reads these rows again; target_ still covers them.
		buffer_.clear();
		bytes_ = 0;
		overflows_++;
	}
}

void
BusOrder::Settle(int64_t now_ms, bool due_now)
{
	if (state_ == State::Filling)
		return; // the fill's answer settles
	if (target_ <= last_) {
		state_ = State::InOrder;
		return;
	}
	if (due_now) {
		state_ = State::Due;
	} else if (state_ == State::InOrder) {
		state_ = State::Grace;
		due_at_ = now_ms + grace_ms_;
	}
}

} // namespace chat_outboxd
