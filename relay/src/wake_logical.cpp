// relay/src/wake_logical.cpp - see wake_logical.hpp.
#include "wake_logical.hpp"

#include <unistd.h>

#include <chrono>
#include <random>

#include "common/process/pg_primary.hpp"

namespace chat_outbox::relay {

namespace {

constexpr int64_t kStatusEveryMs = 1000; // well inside wal_sender_timeout (60 s by default)

std::string
OneLine(std::string why)
{
	while (!why.empty() && (why.back() == '\n' || why.back() == ' '))
		why.pop_back();
	for (auto &c : why)
		if (c == '\n')
			c = ' ';
	return why;
}

int64_t
UnixMicros()
{
	using namespace std::chrono;
	return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

} // namespace

void
LogicalWake::Close()
{
	if (conn_)
		PQfinish(conn_);
	conn_ = nullptr;
}

void
LogicalWake::Drop()
{
	Close();
	state_ = State::kDown;
	retry_at_ = 0;
}

void
LogicalWake::Fail(const std::string &why, int64_t now_ms)
{
	Close();
	state_ = State::kDown;
	retry_at_ = now_ms + backoff_.Next();
	if (why != last_failure_)
		log_("logical wake-up unavailable: " + why + "; the relay polls until it is back");
	last_failure_ = why;
}

void
LogicalWake::Connect(int64_t now_ms)
{
	// the chat database's connection, as a logical replication connection (which also runs SQL)
	// on the primary the relay writes to (common/process/pg_primary.hpp), not a standby the URL lists first
	const char *keys[] = {kTargetSessionAttrsKey, "dbname", "replication", "application_name", nullptr};
	const char *values[] = {kTargetSessionAttrsPrimary, conninfo_.c_str(), "database", "chat-outbox-relay wake", nullptr};
	conn_ = PQconnectdbParams(keys, values, 1);
	if (PQstatus(conn_) != CONNECTION_OK)
		return Fail("connect: " + OneLine(PQerrorMessage(conn_)), now_ms);
	// The stream names a publication; one without tables makes pgoutput send only messages. Two
	// relays may create it at once: the loser's duplicate_object is fine.
	PGresult *r = PQexec(conn_, (std::string("SELECT 1 FROM pg_catalog.pg_publication WHERE pubname = '") +
	                             kWakePublication + "'")
	                                .c_str());
	bool exists = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
	PQclear(r);
	if (!exists) {
		r = PQexec(conn_, (std::string("CREATE PUBLICATION ") + kWakePublication).c_str());
		const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || (state && std::string(state) == "42710");
		std::string why = OneLine(PQresultErrorMessage(r));
		PQclear(r);
		if (!ok)
			return Fail("CREATE PUBLICATION " + std::string(kWakePublication) + ": " + why, now_ms);
	}
	static std::mt19937 rng{std::random_device{}()};
	slot_ = SlotName(static_cast<int>(getpid()), static_cast<uint32_t>(rng()));
	if (!PQsendQuery(conn_, CreateSlotSql(slot_).c_str()))
		return Fail("create slot: " + OneLine(PQerrorMessage(conn_)), now_ms);
	state_ = State::kCreatingSlot;
}

bool
LogicalWake::Step(int64_t now_ms)
{
	switch (state_) {
	case State::kDown:
		if (now_ms < retry_at_)
			return false;
		Connect(now_ms);
		return state_ != State::kDown;
	case State::kCreatingSlot:
	case State::kStarting: {
		if (!PQconsumeInput(conn_)) {
			Fail(OneLine(PQerrorMessage(conn_)), now_ms);
			return true;
		}
		if (PQisBusy(conn_))
			return false;
		PGresult *r = PQgetResult(conn_);
		ExecStatusType st = PQresultStatus(r);
		std::string why = OneLine(PQresultErrorMessage(r));
		PQclear(r);
		if (state_ == State::kCreatingSlot) {
			if (st != PGRES_TUPLES_OK) {
				Fail("CREATE_REPLICATION_SLOT: " + why, now_ms);
				return true;
			}
			while ((r = PQgetResult(conn_)) != nullptr)
				PQclear(r);
			if (!PQsendQuery(conn_, StartReplicationSql(slot_).c_str())) {
				Fail("START_REPLICATION: " + OneLine(PQerrorMessage(conn_)), now_ms);
				return true;
			}
			state_ = State::kStarting;
			return true;
		}
		if (st != PGRES_COPY_BOTH) {
			Fail("START_REPLICATION: " + why, now_ms);
			return true;
		}
		state_ = State::kStreaming;
		stream_ = WakeStream{};
		backoff_.Reset();
		next_status_ = now_ms + kStatusEveryMs;
		log_("logical wake-up streaming (temporary slot " + slot_ + ")");
		last_failure_.clear();
		woken_ = true; // commits before the stream started were not seen
		return true;
	}
	case State::kStreaming:
		return ReadStream(now_ms);
	}
	return false;
}

bool
LogicalWake::ReadStream(int64_t now_ms)
{
	if (!PQconsumeInput(conn_)) {
		Fail("stream: " + OneLine(PQerrorMessage(conn_)), now_ms);
		return true;
	}
	for (;;) {
		char *buf = nullptr;
		int n = PQgetCopyData(conn_, &buf, 1);
		if (n == 0)
			break;
		if (n < 0) {
			PGresult *r = PQgetResult(conn_);
			std::string why = r ? OneLine(PQresultErrorMessage(r)) : "";
			PQclear(r);
			Fail("stream ended" + (why.empty() ? std::string() : ": " + why), now_ms);
			return true;
		}
		WakeEvent ev = stream_.OnCopyData(buf, static_cast<size_t>(n));
		PQfreemem(buf);
		if (ev == WakeEvent::kBad) {
			Fail("stream: a message that is not the replication protocol", now_ms);
			return true;
		}
		if (ev == WakeEvent::kWake)
			woken_ = true;
		if (ev == WakeEvent::kReplyNow)
			next_status_ = now_ms;
	}
	if (now_ms >= next_status_)
		SendStatus(now_ms);
	return false;
}

void
LogicalWake::SendStatus(int64_t now_ms)
{
	std::string msg = StandbyStatus(stream_.Received(), PgEpochMicros(UnixMicros()));
	if (PQputCopyData(conn_, msg.data(), static_cast<int>(msg.size())) != 1 || PQflush(conn_) < 0) {
		Fail("status update: " + OneLine(PQerrorMessage(conn_)), now_ms);
		return;
	}
	next_status_ = now_ms + kStatusEveryMs;
}

bool
LogicalWake::Poll(int64_t now_ms)
{
	while (Step(now_ms) && state_ != State::kDown) {
	}
	bool woken = woken_;
	woken_ = false;
	return woken;
}

int
LogicalWake::Socket() const
{
	return conn_ ? PQsocket(conn_) : -1;
}

int64_t
LogicalWake::NextMs() const
{
	switch (state_) {
	case State::kDown:
		return retry_at_;
	case State::kStreaming:
		return next_status_;
	default:
		return INT64_MAX; // waiting for the server's answer on Socket()
	}
}

} // namespace chat_outbox::relay
