// common/relay/bullmq_batch_add.hpp - one Lua call that adds a batch of BullMQ jobs.
//
// Writes what Queue.add(name, data, {jobId}) writes in bullmq 6 (docs/protocols/bullmq.md,
// 'Adding jobs'): the job hash (name, data, opts, timestamp, delay, priority), `added` and `waiting` events, the id
// on `wait`, and the `marker` that wakes idle workers. An id whose job is in one of the queue's
// states is left alone and gets a `duplicated` event, which is what makes re-sending a batch safe.
// All checks come before the first write: a refused batch leaves Redis as it was.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chat_outbox {

struct JobSpec {
	std::string_view id;   // already validated (bullmq::IsValidJobId)
	std::string_view name; // outbox event, e.g. message.created
	std::string_view data; // payload JSON text
};

// What the caller expects the service's layout key (common/partitions.hpp, LayoutKey) to hold when
// the call runs: the raw value it last read or wrote, so that the rule of what a value means stays
// ParseLayout's alone. kUnchecked on a shard that does not hold the key.
enum class LayoutExpect {
	kUnchecked,
	kAbsent,
	kHolds, // exactly LayoutCheck::value
};

struct LayoutCheck {
	std::string_view service_queue; // the service's queue (not a partition's): whose layout key it is
	LayoutExpect expect = LayoutExpect::kUnchecked;
	std::string_view value = {}; // kHolds only
};

// The relay's mark in one call (docs/architecture.md, 'What Redis kept: the marks'): `expect` is what
// the partition's mark key must hold for the call to run (kAnyMark: anything; "": no mark), `next`
// the mark the call writes after its jobs ("": none). A mark is a cursor's state as
// chat_outbox.relay_marks gives it (sql/parts/outbox.sql), never empty and never kAnyMark.
constexpr std::string_view kAnyMark = "*";
struct MarkStep {
	std::string_view expect = kAnyMark;
	std::string_view next = {};
};

// MarkKey: the mark's key, beside the queue's own keys (in its hash slot on a cluster).
std::string MarkKey(std::string_view prefix, std::string_view queue);

// BatchAddScript is the Lua source. The script replies with one element per job, in order:
// integer 1 = created, 0 = duplicate, or a string = refused (why; nothing of it was written).
// A queue key of the wrong type refuses the whole batch with an error starting "BADQUEUE"; a
// layout key that differs from the call's LayoutCheck refuses it, before anything else, with an
// error that IsLayoutChanged recognises; a mark other than the call's MarkStep expects refuses it too,
// with an error IsMarkChanged recognises.
const std::string &BatchAddScript();

// EncodeBatchAdd appends to *out one EVALSHA request (or EVAL with the full script when sha is
// empty) adding jobs[0..n) to queue `queue` under prefix `prefix`, when the layout key holds what
// `layout` expects (on a Redis Cluster only where the layout key shares the queue's hash slot: the
// service's unpartitioned queue; a partition's queue elsewhere checks nothing, as on a shard that does
// not hold the key). Throws Error on a queue or prefix BullMQ cannot use.
void EncodeBatchAdd(std::string_view prefix, std::string_view queue, const LayoutCheck &layout, const MarkStep &mark,
                    const JobSpec *jobs, size_t n, int64_t now_ms, std::string_view sha, std::string *out);

// IsLayoutChanged: the error reply is the script's refusal of a call whose layout key held something
// else than expected; *value is what it held ("nil" when absent), for the log.
bool IsLayoutChanged(std::string_view error_reply, std::string *value);

// IsMarkChanged: the error reply is the script's refusal of a call whose mark was not the expected one;
// *what is what it says (which mark), for the log.
bool IsMarkChanged(std::string_view error_reply, std::string *what);

} // namespace chat_outbox
