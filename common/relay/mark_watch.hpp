// common/relay/mark_watch.hpp - when a relay must read its marks in Redis before a pass's first batch:
// one rule for both relays (the extension's, extension/src/pg/relay_pass.cpp; chat-outbox-relay,
// relay/src/outbox_db.cpp). docs/architecture.md, 'What Redis kept: the marks', says why.
//
// Each batch-add call checks its partition's mark against what the committed passes wrote there
// (chat_outbox.outbox_cursors.marked), so a call finds out when Redis lost writes. A partition that
// gets no call would not: so the marks of every partition are read, and the cursors whose rows Redis
// lost moved back (chat_outbox.relay_rewind), whenever
// - the relay has not read them since it started, or since a pass of the service failed (a call
//   whose answer was lost may have written; a call may have found another mark);
// - the link made a connection since (RedisLink::Connects): Redis may be another server now (a
//   failover), or the same one with older data (a restart);
// - the cursors are under another partition count than when they were read.
// A shard that is down is not read; the connection made when it is back makes the next pass read.
// Pure, so it is tested without servers.
#pragma once

#include <cstdint>

namespace chat_outbox {

class MarkWatch {
  public:
	enum class State {
		kUnread, // not read since the relay started or a pass failed
		kRead,   // read under partitions_, with the link at connects_
	};

	// MustRead: whether the pass reads the marks first. `partitions`: the count the cursors are under
	// (the service's last pass's, 0 when unknown); `connects`: the link's Connects() now.
	bool
	MustRead(int partitions, int64_t connects) const
	{
		return state_ == State::kUnread || partitions <= 0 || partitions != partitions_ || connects != connects_;
	}
	// Read: the marks were read (and the cursors moved back as they said) under `partitions`, with the
	// link's Connects() after the reads.
	void
	Read(int partitions, int64_t connects)
	{
		state_ = State::kRead;
		partitions_ = partitions;
		connects_ = connects;
	}
	// Forget: a pass of the service failed.
	void Forget() { state_ = State::kUnread; }
	State Now() const { return state_; }

  private:
	State state_ = State::kUnread;
	int partitions_ = 0;
	int64_t connects_ = 0;
};

} // namespace chat_outbox
