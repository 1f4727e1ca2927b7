// relay/src/core/wake_stream.hpp - the logical wake-up's protocol, without I/O: what the relay reads
// from its logical replication stream (pgoutput, an empty publication, messages on) and what it
// answers. The outbox trigger emits a transactional logical decoding message with prefix
// kWakePrefix (sql/managed, chat_outbox.settings.wake = 'wal'); pgoutput sends a transaction only
// when it holds such a message, as BEGIN, MESSAGE, COMMIT, after the transaction committed.
// A COMMIT of a transaction that held our message is a wake-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace chat_outbox::relay {

// The message prefix the outbox trigger emits (the NOTIFY channel's name, one name for both).
constexpr const char kWakePrefix[] = "chat_outbox_relay";
// The publication the stream names: it has no tables, so pgoutput sends only messages.
constexpr const char kWakePublication[] = "chat_outbox_wake";

// What one CopyData message from the server asks of the relay.
enum class WakeEvent {
	kNone,     // nothing to do (BEGIN, MESSAGE, a COMMIT without our message, ...)
	kWake,     // a transaction holding our message committed: run a round
	kReplyNow, // a keepalive that asks for a status update at once
	kBad,      // not the protocol: end the stream
};

// WakeStream follows the stream: the transaction in progress and the newest WAL position received,
// which the relay reports as flushed (the wake-up needs nothing replayed after a restart, so the
// slot may release every WAL segment the relay has seen).
class WakeStream {
  public:
	WakeEvent OnCopyData(const char *data, size_t len);
	uint64_t Received() const { return received_; }

  private:
	WakeEvent OnPgOutput(const char *p, size_t len);
	bool in_wake_txn_ = false;
	uint64_t received_ = 0;
};

// StandbyStatus is the 'r' message reporting `lsn` as written, flushed and applied, at now_us
// (microseconds since 2000-01-01, Postgres' epoch).
std::string StandbyStatus(uint64_t lsn, int64_t now_us);

// PgEpochMicros converts Unix-epoch microseconds to Postgres' epoch.
int64_t PgEpochMicros(int64_t unix_us);

// SlotName: a temporary slot per relay connection, unique across hosts ("chat_outbox_wake_<pid>_<hex>").
std::string SlotName(int pid, uint32_t random);

// StartReplicationSql and CreateSlotSql: the replication commands for a slot.
std::string CreateSlotSql(const std::string &slot);
std::string StartReplicationSql(const std::string &slot);

} // namespace chat_outbox::relay
