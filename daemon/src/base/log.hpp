// daemon/src/base/log.hpp - one log line per event, to stderr, Redis-style levels.
//
// Retry loops log a change of state once (StateLog), never every attempt.
#pragma once

#include <string>

#include "common/outage_cause.hpp"

namespace chat_outboxd {

enum class Level { Debug = 0,
	               Verbose = 1,
	               Notice = 2,
	               Warning = 3 };

void SetLogLevel(const std::string &name); // unknown names keep "notice"
bool LogEnabled(Level level);
void Log(Level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// StateLog remembers the last state a component reported and logs only transitions:
// "redis unreachable: ..." once per cause of the outage (OutageCauses, common/outage_cause.hpp), then
// "redis back" once, however many attempts lie between.
class StateLog {
  public:
	explicit StateLog(std::string component) : component_(std::move(component)) {}
	// Down logs when an outage starts, and again for each cause new to it (a cut connection, then the
	// certificate its reconnects meet); true when it logged.
	bool Down(const std::string &reason);
	// Up logs only if the component was down; `detail` says what recovered.
	void Up(const std::string &detail = "");
	bool IsDown() const { return down_; }

  private:
	std::string component_;
	bool down_ = false;
	bool ever_up_ = false;
	chat_outbox::OutageCauses causes_; // what this outage's "unreachable" lines named
};

} // namespace chat_outboxd
