// relay/src/core/wake_stream.cpp - see wake_stream.hpp. Message layouts: the streaming replication
// protocol (XLogData 'w', keepalive 'k', standby status 'r') and pgoutput's logical replication
// messages (protocol version 1), all integers big-endian.
#include "core/wake_stream.hpp"

#include <cstdio>
#include <cstring>

namespace chat_outbox::relay {

namespace {

uint64_t
ReadU64(const char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = (v << 8) | static_cast<unsigned char>(p[i]);
	return v;
}

void
PutU64(std::string *out, uint64_t v)
{
	for (int i = 7; i >= 0; i--)
		out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

constexpr size_t kXLogDataHeader = 1 + 8 + 8 + 8; // 'w', start, end, send time
constexpr size_t kKeepalive = 1 + 8 + 8 + 1;      // 'k', end, send time, reply requested

} // namespace

WakeEvent
WakeStream::OnCopyData(const char *data, size_t len)
{
	if (len == 0)
		return WakeEvent::kBad;
	if (data[0] == 'k') {
		if (len < kKeepalive)
			return WakeEvent::kBad;
		uint64_t end = ReadU64(data + 1);
		if (end > received_)
			received_ = end;
		return data[17] ? WakeEvent::kReplyNow : WakeEvent::kNone;
	}
	if (data[0] != 'w' || len < kXLogDataHeader + 1)
		return WakeEvent::kBad;
	uint64_t start = ReadU64(data + 1), end = ReadU64(data + 9);
	if (start > received_)
		received_ = start;
	if (end > received_)
		received_ = end;
	return OnPgOutput(data + kXLogDataHeader, len - kXLogDataHeader);
}

WakeEvent
WakeStream::OnPgOutput(const char *p, size_t len)
{
	switch (p[0]) {
	case 'B': // BEGIN: a transaction that holds something the publication sends
		in_wake_txn_ = false;
		return WakeEvent::kNone;
	case 'M': { // MESSAGE: flags (1), lsn (8), prefix (a C string), length (4), content
		if (len < 1 + 1 + 8 + 1)
			return WakeEvent::kBad;
		const char *prefix = p + 10;
		size_t room = len - 10;
		size_t n = strnlen(prefix, room);
		if (n == room)
			return WakeEvent::kBad;
		if (n == sizeof kWakePrefix - 1 && std::memcmp(prefix, kWakePrefix, n) == 0)
			in_wake_txn_ = true;
		return WakeEvent::kNone;
	}
	case 'C': { // COMMIT: the transaction's rows are visible now
		bool wake = in_wake_txn_;
		in_wake_txn_ = false;
		return wake ? WakeEvent::kWake : WakeEvent::kNone;
	}
	default: // relation, type, origin, ...: not sent for an empty publication, and not ours
		return WakeEvent::kNone;
	}
}

std::string
StandbyStatus(uint64_t lsn, int64_t now_us)
{
	std::string out(1, 'r');
	PutU64(&out, lsn); // written
	PutU64(&out, lsn); // flushed: what the slot may release
	PutU64(&out, lsn); // applied
	PutU64(&out, static_cast<uint64_t>(now_us));
	out.push_back('\0'); // no reply requested
	return out;
}

int64_t
PgEpochMicros(int64_t unix_us)
{
	// 2000-01-01 is 10,957 days after 1970-01-01
	return unix_us - INT64_C(946684800) * 1000000;
}

std::string
SlotName(int pid, uint32_t random)
{
	char buf[64];
	std::snprintf(buf, sizeof buf, "chat_outbox_wake_%d_%08x", pid, random);
	return buf;
}

std::string
CreateSlotSql(const std::string &slot)
{
	// TEMPORARY: dropped when this connection ends, so a relay that is gone holds no WAL
	return "CREATE_REPLICATION_SLOT " + slot + " TEMPORARY LOGICAL pgoutput (SNAPSHOT 'nothing')";
}

std::string
StartReplicationSql(const std::string &slot)
{
	return "START_REPLICATION SLOT " + slot + " LOGICAL 0/0 (proto_version '1', publication_names '" +
	       kWakePublication + "', messages 'true')";
}

} // namespace chat_outbox::relay
