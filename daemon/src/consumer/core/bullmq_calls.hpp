// daemon/src/consumer/core/bullmq_calls.hpp - builds the KEYS/ARGV of every consumer script, so the
// argument layouts documented in the scripts' heads (consumer/core/lua/*.lua) live in one place.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bullmq/queue_keys.hpp"

#include "consumer/core/bullmq_job.hpp"
#include "consumer/core/bullmq_scripts.hpp"

namespace chat_outboxd {

using ScriptCall = chat_outbox::ScriptCall;

// QueueKeys is one queue's prefix and name; its keys are named by bullmq::QueueKey.
class QueueKeys {
  public:
	QueueKeys(std::string prefix, std::string queue)
	    : prefix_(std::move(prefix)), queue_(std::move(queue)), base_(Key(""))
	{
	}
	// Base is "<prefix>:<queue>:", the start of every job key the scripts build (base .. id).
	const std::string &Base() const { return base_; }
	std::string Key(std::string_view suffix) const { return chat_outbox::bullmq::QueueKey(prefix_, queue_, suffix); }

  private:
	std::string prefix_, queue_, base_;
};

struct CompleteItem {
	std::string id, token, returnvalue; // returnvalue must be JSON text: bullmq readers JSON.parse it
	KeepPolicy keep;
};

struct FailItem {
	std::string id, token, reason; // reason is plain text
	KeepPolicy keep;
	int64_t attempts = 0;
};

struct RetryItem {
	std::string id, token, reason;
	int64_t delay_ms = 0;
	bool lifo = false;
};

struct HeldLock {
	std::string id, token;
};

// kRedisClock as now_ms: the script reads Redis's own clock (TIME) when it runs. For a call queued
// behind a blocking command, which runs when the block ends, not when it was sent.
constexpr int64_t kRedisClock = -1;

// lease_holder, when not empty, fences the fetch and the recovery by the partition's lease (the
// key "lease" under the queue): the script answers NOLEASE and does nothing unless the lease holds it.
ScriptCall FetchCall(const QueueKeys &q, int64_t now_ms, const std::string &token_prefix, uint64_t first_n,
                     int64_t lock_ms, int64_t max_jobs, const std::string &worker_name,
                     const std::string &lease_holder = "");
ScriptCall CompleteCall(const QueueKeys &q, int64_t now_ms, const std::vector<CompleteItem> &items);
ScriptCall FailCall(const QueueKeys &q, int64_t now_ms, const std::vector<FailItem> &items);
ScriptCall RetryCall(const QueueKeys &q, int64_t now_ms, const std::vector<RetryItem> &items);
ScriptCall ExtendLocksCall(const QueueKeys &q, int64_t now_ms, int64_t lock_ms, const std::vector<HeldLock> &locks);
// StalledCheckCall never lets the check fail a job: a consumer's crash may delay a message, never
// drop it (the limit it passes is one no count reaches).
ScriptCall StalledCheckCall(const QueueKeys &q, int64_t now_ms, int64_t stalled_interval_ms);
// takeover: also take back the jobs of any earlier holder of the partition's lease (lua/recover_identity.lua).
ScriptCall RecoverIdentityCall(const QueueKeys &q, int64_t now_ms, const std::string &identity, bool takeover = false,
                               const std::string &lease_holder = "");
// IsNoLease: the error reply of a script fenced by a lease we no longer hold.
bool IsNoLease(const std::string &error);

// StackTrace is the `stacktrace` field: a JSON array of strings, as bullmq readers parse it.
std::string StackTrace(const std::string &line);

} // namespace chat_outboxd
