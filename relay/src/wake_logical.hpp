// relay/src/wake_logical.hpp - the logical wake-up (--wake logical): a logical replication stream
// on its own connection, which wakes the relay when a transaction holding the outbox trigger's
// message commits (chat_outbox.settings.wake = 'wal'). It never blocks a round for long: the slot
// is created and the stream started with asynchronous libpq calls, and the relay keeps polling
// (--poll-interval) whenever the stream is not up.
//
// The slot is TEMPORARY (dropped when the connection ends: a relay stopped, killed or cut off holds
// no WAL) and every status update reports all WAL received as flushed, so a running relay holds
// none either. A stream that fails (no REPLICATION attribute, wal_level below logical, the
// connection lost) is logged once per distinct failure and retried with backoff.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <functional>
#include <string>

#include "common/relay/relay_health.hpp"
#include "core/wake_stream.hpp"

namespace chat_outbox::relay {

class LogicalWake {
  public:
	using LogFn = std::function<void(const std::string &)>;
	LogicalWake(std::string conninfo, LogFn log) : conninfo_(std::move(conninfo)), log_(std::move(log)) {}
	~LogicalWake() { Close(); }
	LogicalWake(const LogicalWake &) = delete;
	LogicalWake &operator=(const LogicalWake &) = delete;

	// Poll advances the stream without blocking (connects, creates the slot, starts streaming,
	// reads what arrived, answers keepalives) and returns true when a wake-up arrived since the
	// last call, or the stream has just come up (commits before it were not seen).
	bool Poll(int64_t now_ms);
	// Socket is the fd to wait on (-1 while there is none); NextMs is when Poll wants to run next
	// even if nothing arrives (a retry, a status update).
	int Socket() const;
	int64_t NextMs() const;
	bool Streaming() const { return state_ == State::kStreaming; }
	// Drop closes the stream at once, silently (the relay lost Postgres and says so itself): a
	// walsender whose client is gone ends, and cannot hold up a shutdown. Poll opens it again.
	void Drop();

  private:
	enum class State {
		kDown,         // no connection; retry at retry_at_
		kCreatingSlot, // CREATE_REPLICATION_SLOT sent (it waits for transactions in progress)
		kStarting,     // START_REPLICATION sent
		kStreaming,    // copy-both: reading messages
	};
	void Connect(int64_t now_ms);
	bool Step(int64_t now_ms); // one state's work; true when the state changed
	bool ReadStream(int64_t now_ms);
	void Fail(const std::string &why, int64_t now_ms);
	void Close();
	void SendStatus(int64_t now_ms);

	std::string conninfo_;
	LogFn log_;
	PGconn *conn_ = nullptr;
	State state_ = State::kDown;
	int64_t retry_at_ = 0, next_status_ = 0;
	Backoff backoff_{1000, 30000};
	std::string slot_, last_failure_;
	WakeStream stream_;
	bool woken_ = false;
};

} // namespace chat_outbox::relay
