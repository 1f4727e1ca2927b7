// daemon/src/consumer/core/batch.hpp - one fetched batch of jobs as the consumer carries it from the
// fetch through the inbox to its finishing scripts.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "consumer/core/bullmq_job.hpp"
#include "consumer/core/job_message.hpp"
#include "inbox/core/delivery.hpp"

namespace chat_outboxd {

struct BatchJob {
	Job job;
	JobOptions opts;
	std::optional<ChatMessage> msg;
	std::string fail_reason; // non-empty: a bad message, goes to the failed set
	bool lost = false;       // our lock expired or was taken: not ours to finish any more
	bool inserted = false;   // its inbox row is new (else a duplicate)
	std::string rejected;    // non-empty: the inbox refused this message's row (retried or failed)

	bool ToInbox() const { return msg && rejected.empty(); }
};

struct Batch {
	std::vector<BatchJob> jobs;
	// Parts of the batch still running: the inbox stage (1 from the start until it hands the inbox on)
	// and each finishing script (fail, complete, retry of refused rows) from when it is sent until it
	// answers. At 0 the batch is done and its locks are no longer extended.
	int pending = 1;

	bool AnyMessage() const;
	bool AnyBad() const;
};

using BatchPtr = std::shared_ptr<Batch>;

// MakeBatch validates fetched jobs: a job whose data is not a chat message gets its fail_reason.
BatchPtr MakeBatch(std::vector<Job> jobs);

// MarkInserted marks the jobs whose message is among the new rows; the first job carrying a new id
// wins, later ones (and ids already in the inbox) are duplicates. Returns the number of duplicates.
size_t MarkInserted(Batch &batch, const std::vector<InboxMessage> &inserted);

} // namespace chat_outboxd
