// extension/src/core/bullmq_batch_add.hpp - one Lua call that adds a batch of BullMQ jobs.
//
// Writes what Queue.add(name, data, {jobId}) writes in bullmq 6 (docs/protocols/bullmq.md,
// 'Adding jobs'): the job hash (name, data, opts, timestamp, delay, priority), `added` and
// `waiting` events, the id on `wait`, and the `marker` that wakes idle workers. An id whose hash
// already exists is left alone and gets a `duplicated` event, which is what makes re-sending a
// batch safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chat_outbox {

struct JobSpec {
	std::string_view id;   // already validated (job_id.hpp)
	std::string_view name; // outbox event, e.g. message.created
	std::string_view data; // payload JSON text
};

// BatchAddScript is the Lua source. The script replies with one integer per job, in order:
// 1 = created, 0 = duplicate.
const std::string &BatchAddScript();

// EncodeBatchAdd appends to *out one EVALSHA request (or EVAL with the full script when sha is
// empty) adding jobs[0..n) to queue `queue` under prefix `prefix`. Throws Error on a queue or
// prefix BullMQ cannot use.
void EncodeBatchAdd(std::string_view prefix, std::string_view queue, const JobSpec *jobs, size_t n, int64_t now_ms,
					std::string_view sha, std::string *out);

// QueueKey returns "<prefix>:<queue>:<suffix>".
std::string QueueKey(std::string_view prefix, std::string_view queue, std::string_view suffix);

} // namespace chat_outbox

