// daemon/src/consumer/stalled_checker.hpp - runs BullMQ's stalled-job check from the daemon: jobs that were
// active at one check and have no lock at the next go back to wait.
//
// Without it a queue served only by daemons would keep a crashed consumer's jobs in `active`
// forever. Unlike BullMQ's (maxStalledCount, 1 by default), it never fails a job, however often it
// stalled: a consumer's crash may delay a message, never drop it. The `stalled-check` key is shared with real bullmq Workers, so all of them together
// check at most once per interval. We run slightly after the key's TTL so our own check does not
// land just before the key expires and get skipped (which would double the period).
#pragma once

#include <cstdint>

#include "consumer/core/bullmq_calls.hpp"
#include "metrics/core/daemon_metrics.hpp"
#include "net/redis_commands.hpp"
#include "base/uv_timer.hpp"

namespace chat_outboxd {

class StalledChecker {
  public:
	StalledChecker(uv_loop_t *loop, RedisCommands &cmd, QueueKeys keys, int64_t interval_ms, Metrics &metrics);
	void Start(); // checks now, then every interval
	void Close();

  private:
	void Run();

	RedisCommands &cmd_;
	QueueKeys keys_;
	int64_t interval_ms_;
	Metrics &metrics_;
	UvTimer timer_;
	bool running_ = false;
};

} // namespace chat_outboxd
