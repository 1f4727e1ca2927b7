// daemon/src/consumer/inbox_stage.cpp - see inbox_stage.hpp.
#include "consumer/inbox_stage.hpp"

#include <algorithm>
#include <csignal>

#include "base/log.hpp"
#include "base/wall_clock.hpp"
#include "consumer/core/inbox_push.hpp"

namespace chat_outboxd {

InboxStage::InboxStage(uv_loop_t *loop, PgClient &pg, const Config &cfg, MessageSink &sink, Metrics &metrics)
    : cfg_(cfg), sink_(sink), metrics_(metrics), writer_(pg, cfg.service, cfg.inbox_stall_timeout), retry_timer_(loop, "inbox-retry")
{
}

void
InboxStage::Write(BatchPtr batch, std::function<void(BatchPtr)> committed)
{
	batch_ = std::move(batch);
	committed_ = std::move(committed);
	Attempt();
}

void
InboxStage::Abandon()
{
	batch_.reset();
	committed_ = nullptr;
	retry_timer_.Stop();
}

void
InboxStage::Close(std::function<void()> done)
{
	Abandon();
	retry_timer_.Close(std::move(done));
}

void
InboxStage::OnConnected()
{
	if (!pushed_up_to_) {
		ReadHighWater();
		return;
	}
	// A batch waiting out its retry backoff waited for the server, which is back: write it now, not
	// up to kServerRetryMaxMs later (after a failover that is a second of silence for every client).
	if (batch_ && retry_timer_.Active()) {
		retry_timer_.Stop();
		Attempt();
	}
}

void
InboxStage::ReadHighWater()
{
	if (reading_high_water_ || pushed_up_to_)
		return;
	reading_high_water_ = true;
	writer_.ReadHighWater([this](std::optional<int64_t> high) {
		reading_high_water_ = false;
		if (high)
			pushed_up_to_ = *high;
		if (!batch_)
			return;
		if (high)
			Attempt();
		else // connection failures are logged by the PgClient
			RetryLater();
	});
}

// RetryLater writes the batch again after the backoff, whole: refused rows are found again.
void
InboxStage::RetryLater()
{
	retry_timer_.Start(static_cast<uint64_t>(backoff_.Next()), [this] {
		if (batch_)
			Attempt();
	});
}

std::vector<ChatMessage>
InboxStage::Messages() const
{
	std::vector<ChatMessage> out;
	for (const BatchJob &bj : batch_->jobs) {
		if (!bj.ToInbox())
			continue;
		out.push_back(*bj.msg);
	}
	return out;
}

void
InboxStage::Attempt()
{
	if (!pushed_up_to_) {
		ReadHighWater();
		return;
	}
	if (on_attempt_)
		on_attempt_();
	for (auto &bj : batch_->jobs)
		bj.rejected.clear();
	writer_.Write(Messages(), pushed_up_to_, [this, b = batch_](InboxWriteResult &&res) {
		if (batch_ == b)
			OnWritten(std::move(res));
	});
}

void
InboxStage::OnWritten(InboxWriteResult &&res)
{
	if (!res.ok && !res.connection_lost && InboxRowRefused(res.sqlstate)) {
		// One message's row is refused (a constraint, a trigger, bad data such as a created_at that
		// looked like ISO 8601 but is no date): find it instead of holding the whole queue behind it.
		Log(Level::Warning, "inbox refused the batch (%s, SQLSTATE %s); writing its messages one by one",
		    res.error.c_str(), res.sqlstate.c_str());
		isolated_ = InboxRows();
		IsolateFrom(0, false);
		return;
	}
	if (!res.ok) {
		// Connection failures are logged by the PgClient; anything else (a missing table,
		// a permission) is logged here, once until it works again.
		if (!res.connection_lost && !failing_)
			Log(Level::Warning, "inbox write failed: %s%s%s (batch kept, retrying)", res.error.c_str(),
			    res.sqlstate.empty() ? "" : " SQLSTATE ", res.sqlstate.c_str());
		failing_ = failing_ || !res.connection_lost;
		RetryLater();
		return;
	}
	if (failing_)
		Log(Level::Notice, "inbox write works again");
	failing_ = false;
	backoff_.Reset();
	Committed(std::move(res));
}

// IsolateFrom writes the batch's messages one at a time, in queue order, from job i on. A message
// whose created_at Postgres rejects (data exception, class 22) is written again without it (NULL),
// so only it loses the sender's time; a message refused otherwise is
// marked `rejected`. The accepted ones continue as one commit. Server trouble half-way sends the
// whole batch back to the normal retry (the rows already written come back as existing).
void
InboxStage::IsolateFrom(size_t i, bool without_created_at)
{
	while (i < batch_->jobs.size() && !batch_->jobs[i].msg)
		i++;
	if (i == batch_->jobs.size()) {
		Committed(std::move(isolated_));
		return;
	}
	std::vector<ChatMessage> one = {*batch_->jobs[i].msg};
	if (without_created_at)
		one[0].created_at.reset();
	writer_.Write(one, pushed_up_to_, [this, i, without_created_at, b = batch_](InboxWriteResult &&r) {
		if (batch_ != b)
			return;
		if (r.ok) {
			isolated_.Add(std::move(r));
			IsolateFrom(i + 1, false);
			return;
		}
		const ChatMessage &m = *batch_->jobs[i].msg;
		if (!r.connection_lost && InboxDataException(r.sqlstate) && m.created_at && !without_created_at) {
			Log(Level::Warning, "message %s: created_at \"%s\" refused (%s); stored without it",
			    m.id.c_str(), m.created_at->c_str(), r.error.c_str());
			IsolateFrom(i, true);
			return;
		}
		if (!r.connection_lost && InboxRowRefused(r.sqlstate)) {
			batch_->jobs[i].rejected = "inbox refused the message: " + r.error + " (SQLSTATE " + r.sqlstate + ")";
			IsolateFrom(i + 1, false);
			return;
		}
		Log(Level::Warning, "inbox write failed while isolating a refused message: %s (batch kept, retrying)",
		    r.error.c_str());
		RetryLater();
	});
}

void
InboxStage::Committed(InboxRows &&rows)
{
	size_t dups = MarkInserted(*batch_, rows.inserted);
	metrics_.duplicates_skipped += dups;
	commits_++;
	size_t msgs = 0;
	for (const auto &bj : batch_->jobs)
		msgs += bj.ToInbox() ? 1 : 0;
	Log(Level::Verbose, "inbox commit: %zu job(s), %zu new, %zu duplicate(s)", msgs, msgs - dups, dups);
	if (cfg_.crash_after_inbox > 0 && commits_ == cfg_.crash_after_inbox) {
		Log(Level::Warning, "--crash-after-inbox %lld reached: SIGKILL", static_cast<long long>(commits_));
		raise(SIGKILL);
	}
	Push(std::move(rows));
	BatchPtr b = std::move(batch_);
	auto committed = std::move(committed_);
	committed_ = nullptr;
	committed(std::move(b));
}

// Push hands the rows RowsToPush picks to the sink.
void
InboxStage::Push(InboxRows &&rows)
{
	double now = WallSeconds();
	for (const auto &c : rows.created)
		if (c)
			metrics_.lag_seconds.Observe(std::max(0.0, now - *c));
	std::vector<InboxMessage> push = RowsToPush(std::move(rows), *pushed_up_to_);
	if (push.empty())
		return;
	metrics_.messages_delivered += push.size();
	pushed_up_to_ = push.back().seq;
	try {
		sink_.Deliver(push);
	} catch (const std::exception &e) {
		Log(Level::Warning, "delivery failed: %s", e.what()); // the rows are committed: catch-up serves them
	}
}

} // namespace chat_outboxd
