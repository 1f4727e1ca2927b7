// daemon/src/consumer/core/bullmq_job.hpp - the BullMQ job codec: fetch replies into jobs, job opts into
// the policies the consumer applies: attempts and backoff, removeOnComplete/removeOnFail, lifo (the field
// names and formats are BullMQ's, as a bullmq Queue writes them; the key layout is in docs/daemon.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "net/core/redis_value.hpp"

namespace chat_outboxd {

// KeepPolicy is removeOnComplete/removeOnFail: count -1 keeps all, 0 removes at once, N keeps the
// newest N; age_s > 0 also drops finished jobs older than that many seconds.
struct KeepPolicy {
	int64_t count = -1;
	int64_t age_s = 0;
};

struct Backoff {
	std::string type; // "" (none), "fixed" or "exponential"
	int64_t delay_ms = 0;
};

struct JobOptions {
	int64_t attempts = 0;
	Backoff backoff;
	bool lifo = false;
	std::optional<KeepPolicy> remove_on_complete; // nullopt: use the daemon's default
	std::optional<KeepPolicy> remove_on_fail;
};

struct Job {
	std::string id;
	std::string token;                         // our lock value for this job
	std::map<std::string, std::string> fields; // the hash fields the fetch reads (not the whole hash)

	const std::string *Field(const std::string &name) const;
	int64_t AttemptsMade() const; // `atm`, falling back to the v4 name `attemptsMade`
	// StartsLost counts the earlier starts of the job that ended neither finished nor retried: a
	// consumer crashed or lost its lock holding it (`ats`, which the fetch counts this start in, less
	// `atm` and this start).
	int64_t StartsLost() const;
	JobOptions Options() const; // from `opts`; unparsable opts give defaults (never poison)
};

struct FetchResult {
	int64_t next_delayed_ms = 0; // due time of the earliest delayed job, 0 if none
	int64_t rate_limited_ms = 0; // > 0: the queue's global rate limit is hit for this long
	std::vector<Job> jobs;       // in queue order
};

// DecodeFetchReply reads the reply of FetchScript: the field names come once, then per job its id,
// token and those fields' values (nil: absent). False with *error on a malformed reply.
bool DecodeFetchReply(const RedisValue &reply, FetchResult *out, std::string *error);

// DecodeStatuses reads the per-job integer array returned by the finish and extend scripts.
bool DecodeStatuses(const RedisValue &reply, size_t expected, std::vector<int64_t> *out, std::string *error);

// ParseKeep interprets a removeOnComplete/removeOnFail JSON value (true, false, N, {age,count}).
std::optional<KeepPolicy> ParseKeep(const std::string &json_value);

// BackoffDelay is the delay before the next attempt after `attempts_made` failures, as BullMQ computes
// it: "fixed" waits delay ms, "exponential" 2^(attempts_made - 1) × delay ms (at most a year).
int64_t BackoffDelay(const Backoff &backoff, int64_t attempts_made);

// FinishStatusText names a finish-script status (-1 missing, -2 lock gone, ...).
const char *FinishStatusText(int64_t status);

} // namespace chat_outboxd
