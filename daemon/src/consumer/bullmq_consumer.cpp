// daemon/src/consumer/bullmq_consumer.cpp - see bullmq_consumer.hpp for the cycle; this file is its state machine.
//
// Flags, not a state enum, because the pieces overlap: a BZPOPMIN may be pending while a
// reconnect schedules a recovery, and Stop() may arrive in any of them. The invariants:
//   - at most one of {fetching, recovering, batch} is in progress;
//   - nothing is completed before its inbox row is committed;
//   - finishing scripts check lock tokens, so running one again after a lost reply is harmless;
//     the fetch is not idempotent, so a lost fetch reply is repaired by the identity recovery.
#include "consumer/bullmq_consumer.hpp"

#include <algorithm>
#include <csignal>
#include <set>
#include <unistd.h>

#include "backoff.hpp"
#include "consumer/core/bullmq_calls.hpp"
#include "consumer/core/bullmq_identity.hpp"
#include "consumer/core/inbox_push.hpp"
#include "consumer/core/job_message.hpp"
#include "consumer/identity_guard.hpp"
#include "consumer/inbox_writer.hpp"
#include "base/log.hpp"
#include "consumer/stalled_checker.hpp"
#include "base/uv_timer.hpp"
#include "base/wall_clock.hpp"

namespace chat_outboxd {

namespace {

constexpr int64_t kStopDeadlineMs = 10000; // longest a SIGTERM waits for a batch stuck on a down server
constexpr double kMaxBlockSeconds = 5.0;   // BZPOPMIN timeout, as bullmq's drainDelay

struct BatchJob {
	Job job;
	JobOptions opts;
	std::optional<ChatMessage> msg;
	std::string fail_reason; // non-empty: goes to the failed set
	bool lost = false;       // our lock expired or was taken: not ours to finish any more
	bool inserted = false;   // its inbox row is new (else a duplicate)
	std::string rejected;    // non-empty: the inbox refused this message's row (retried or failed)

	bool ToInbox() const { return msg && rejected.empty(); }
};

struct Batch {
	std::vector<BatchJob> jobs;
	bool inbox_done = false; // written and pushed (or nothing to write): the inbox is free for the next
	bool fail_done = true;
	bool complete_done = true;
	bool reject_done = true;
	InboxWriteResult isolated; // rows written one by one after the inbox refused the whole batch
	bool drop_created_at = false; // Postgres rejected a created_at that looked like ISO 8601 (e.g. Feb 31)
};

using BatchPtr = std::shared_ptr<Batch>;

} // namespace

struct BullmqConsumer::Impl {
	uv_loop_t *loop;
	Config cfg;
	RedisConn &cmd, &blk;
	PgClient &pg;
	MessageSink &sink;
	Metrics &metrics;
	QueueKeys keys;
	std::string token_prefix; // <identity>:<run uuid>:
	uint64_t token_n = 1;
	InboxWriter writer;
	StalledChecker stalled;
	UvTimer extend_timer, idle_timer, inbox_retry_timer, script_retry_timer, stop_timer;
	chat_outbox::Backoff inbox_backoff{50, 5000};
	chat_outbox::Backoff script_backoff{100, 5000};
	// Three stages overlap, so Redis and Postgres work side by side instead of in turn: `batch` owns
	// the inbox (written, then pushed, strictly one at a time: that is what keeps queue order);
	// `prefetched` was fetched during its write; `finishing` were pushed and wait for their Redis
	// scripts (complete, fail, retry). All of them are locked by us and their locks extended.
	BatchPtr batch;
	std::optional<std::vector<Job>> prefetched;
	std::vector<BatchPtr> finishing;
	std::vector<std::function<void()>> after_reconnect; // finishing steps whose reply was lost
	std::function<void(int)> on_fatal;
	std::function<void()> stop_done;
	bool guard_passed = false, need_recovery = false, fetching = false, recovering = false, blocking = false;
	bool stopping = false, finished = false, inbox_failing = false, reading_high_water = false;
	int64_t inbox_commits = 0;
	// Highest inbox seq pushed to clients: what this process pushed, at least the inbox's highest seq
	// when the inbox connection first opened (clients that connect get older rows by catch-up).
	// Unknown until that read answers; no batch is written before.
	std::optional<int64_t> delivered_up_to;

	Impl(uv_loop_t *l, const Config &c, RedisConn &cm, RedisConn &bl, PgClient &p, MessageSink &s, Metrics &m)
	    : loop(l), cfg(c), cmd(cm), blk(bl), pg(p), sink(s), metrics(m), keys(c.prefix, c.queue),
	      token_prefix(c.identity + ":" + NewUuid() + ":"), writer(p, c.service),
	      stalled(l, cm, keys, c.stalled_interval, m), extend_timer(l, "extend-locks"),
	      idle_timer(l, "fetch-idle"), inbox_retry_timer(l, "inbox-retry"), script_retry_timer(l, "script-retry"),
	      stop_timer(l, "stop-deadline")
	{
	}

	// --- wiring ---------------------------------------------------------------------------

	void Start()
	{
		// Redis is "up" only while both connections are: an idle command connection may learn of a
		// lost server only at its next command, the blocking one learns at once.
		cmd.OnReady([this] {
			metrics.redis_up = blk.Ready();
			OnCommandReady();
		});
		cmd.OnDown([this] {
			metrics.redis_up = false;
			need_recovery = true; // a fetch reply may have been lost with the connection
		});
		blk.OnReady([this] {
			metrics.redis_up = cmd.Ready();
			Pump();
		});
		blk.OnDown([this] { metrics.redis_up = false; });
		pg.OnStateChange([this](bool up) {
			metrics.postgres_up = up;
			if (up && !delivered_up_to)
				ReadHighWater();
			if (up)
				Pump();
		});
		uint64_t half = static_cast<uint64_t>(cfg.lock_duration / 2);
		extend_timer.Start(half, [this] { ExtendLocks(); }, half);
		cmd.Start();
		blk.Start();
		pg.Start();
	}

	void OnCommandReady()
	{
		if (finished)
			return;
		if (!guard_passed) {
			std::string name = ConnectionName(cfg.prefix, cfg.queue, cfg.identity);
			CheckIdentity(cmd, name, [this](IdentityCheck result, int64_t other) {
				if (result == IdentityCheck::Clash) {
					Log(Level::Warning,
					    "another chat-outboxd with identity '%s' is running on queue %s (redis client %lld); "
					    "refusing to run",
					    cfg.identity.c_str(), cfg.queue.c_str(), static_cast<long long>(other));
					if (on_fatal)
						on_fatal(3);
					return;
				}
				if (result == IdentityCheck::Unknown) {
					idle_timer.Start(1000, [this] {
						if (cmd.Ready())
							OnCommandReady();
					});
					return;
				}
				guard_passed = true;
				need_recovery = true;
				Log(Level::Notice, "consuming %s%s as '%s' into %s.inbox", keys.Base().c_str(), "*",
				    cfg.identity.c_str(), cfg.service.c_str());
				stalled.Start();
				Pump();
			});
			return;
		}
		auto steps = std::move(after_reconnect);
		after_reconnect.clear();
		for (auto &s : steps)
			s();
		Pump();
	}

	// --- the fetch loop ---------------------------------------------------------------------

	void Pump()
	{
		if (!guard_passed || batch || fetching || recovering) {
			MaybeFinishStop();
			return;
		}
		if (prefetched) {
			// before any recovery: a recovery would take these jobs, which we still hold, back to wait
			std::vector<Job> jobs = std::move(*prefetched);
			prefetched.reset();
			StartBatch(std::move(jobs));
			return;
		}
		if (stopping) {
			MaybeFinishStop();
			return;
		}
		if (!cmd.Ready() || !pg.Connected())
			return;
		if (need_recovery) {
			if (finishing.empty()) // a recovery would take their jobs back before their scripts ran
				Recover();
			return;
		}
		Fetch();
	}

	void Recover()
	{
		recovering = true;
		cmd.Eval(RecoverIdentityCall(keys, WallMs(), cfg.identity), [this](const RedisValue *r, const std::string &) {
			recovering = false;
			if (finished)
				return;
			if (!r) {
				MaybeFinishStop();
				return; // OnCommandReady pumps again
			}
			if (r->IsError()) {
				Log(Level::Warning, "identity recovery failed: %s", r->str.c_str());
				idle_timer.Start(1000, [this] { Pump(); });
				return;
			}
			need_recovery = false;
			if (!r->elements.empty())
				Log(Level::Notice, "took back %zu job(s) left active by an earlier run of '%s'", r->elements.size(),
				    cfg.identity.c_str());
			Pump();
		});
	}

	ScriptCall NextFetchCall(int64_t now_ms)
	{
		uint64_t first = token_n;
		token_n += static_cast<uint64_t>(cfg.batch_size);
		return FetchCall(keys, now_ms, token_prefix, first, cfg.lock_duration, cfg.batch_size, cfg.identity);
	}

	void Fetch()
	{
		fetching = true;
		cmd.Eval(NextFetchCall(WallMs()), [this](const RedisValue *r, const std::string &) { OnFetched(r); });
	}

	void OnFetched(const RedisValue *r)
	{
		fetching = false;
		if (finished)
			return;
		if (!r) {
			need_recovery = true; // the script may have run and locked jobs for us
			MaybeFinishStop();
			return;
		}
		FetchResult fr;
		std::string error;
		if (!DecodeFetchReply(*r, &fr, &error)) {
			Log(Level::Warning, "fetch failed: %s", error.c_str());
			idle_timer.Start(1000, [this] { Pump(); });
			MaybeFinishStop();
			return;
		}
		if (batch) { // a prefetch
			if (!fr.jobs.empty())
				prefetched = std::move(fr.jobs);
			return; // the batch's end pumps
		}
		if (fr.jobs.empty()) {
			if (stopping)
				MaybeFinishStop();
			else
				Wait(fr);
			return;
		}
		StartBatch(std::move(fr.jobs));
	}

	// Wait sleeps until the marker says there is work, a delayed job is due or the timeout passes.
	// The fetch goes out right behind the BZPOPMIN on the same connection, so Redis runs it the
	// moment the block ends: a message arriving at an idle daemon costs one round trip to Redis,
	// not two. It reads Redis's clock, since it runs whenever the block ends. `fetching` stays set
	// meanwhile, so nothing else fetches, and Stop unblocks it rather than wait out the timeout.
	void Wait(const FetchResult &fr)
	{
		if (fr.rate_limited_ms > 0) {
			idle_timer.Start(static_cast<uint64_t>(fr.rate_limited_ms), [this] { Pump(); });
			return;
		}
		if (blocking)
			return;
		if (!blk.Ready()) {
			idle_timer.Start(1000, [this] { Pump(); });
			return;
		}
		double timeout = kMaxBlockSeconds;
		if (fr.next_delayed_ms > 0)
			timeout = std::clamp((fr.next_delayed_ms - WallMs()) / 1000.0, 0.01, kMaxBlockSeconds);
		char t[32];
		snprintf(t, sizeof t, "%.3f", timeout);
		int64_t deadline = static_cast<int64_t>(timeout * 1000) + 5000;
		blocking = true;
		fetching = true;
		blk.Command({"BZPOPMIN", keys.Key("marker"), t},
		            [this](const RedisValue *, const std::string &) { blocking = false; }, deadline);
		blk.Eval(NextFetchCall(kRedisClock), [this](const RedisValue *r, const std::string &) { OnFetched(r); },
		         deadline + 5000);
	}

	// --- one batch --------------------------------------------------------------------------

	void StartBatch(std::vector<Job> jobs)
	{
		batch = std::make_shared<Batch>();
		metrics.batch_size.Observe(static_cast<double>(jobs.size()));
		bool any_fail = false, any_msg = false;
		for (auto &job : jobs) {
			BatchJob bj;
			bj.opts = job.Options();
			NoteStalls(job);
			if (const std::string *data = job.Field("data")) {
				std::string reason;
				bj.msg = ParseMessage(*data, &reason);
				if (!bj.msg)
					bj.fail_reason = reason;
			} else
				bj.fail_reason = "invalid message: data missing";
			any_fail = any_fail || !bj.fail_reason.empty();
			any_msg = any_msg || bj.msg.has_value();
			bj.job = std::move(job);
			batch->jobs.push_back(std::move(bj));
		}
		Log(Level::Debug, "batch of %zu job(s), first %s", batch->jobs.size(), batch->jobs[0].job.id.c_str());
		if (any_fail) {
			batch->fail_done = false;
			FailPoison(batch);
		}
		if (any_msg)
			WriteInbox();
		else
			ReleaseInbox();
	}

	// NoteStalls logs a job that comes back after crashes. It is processed like any other: only a
	// message that is itself bad is failed, so a job a stalled check marked for failure (`defa`, which
	// a bullmq Worker's check sets past its maxStalledCount) is stored and completed too.
	void NoteStalls(const Job &job)
	{
		int64_t lost = job.StartsLost();
		if (lost > cfg.max_stalled_count)
			Log(Level::Warning,
			    "job %s was started %lld time(s) before and never finished (a consumer crashed or lost its lock "
			    "holding it); processing it again",
			    job.id.c_str(), static_cast<long long>(lost));
		if (const std::string *defa = job.Field("defa"))
			Log(Level::Notice, "job %s is marked '%s' by a stalled check; processing it: a crash never fails a message",
			    job.id.c_str(), defa->c_str());
	}

	// FailItemFor is a job's final failure: logged once, kept per its removeOnFail, else --remove-on-fail.
	FailItem FailItemFor(const BatchJob &bj, const std::string &reason)
	{
		Log(Level::Warning, "job %s failed: %s", bj.job.id.c_str(), reason.c_str());
		KeepPolicy keep;
		keep.count = cfg.remove_on_fail;
		return {bj.job.id, bj.job.token, reason, bj.opts.remove_on_fail.value_or(keep), bj.opts.attempts};
	}

	// RunFail moves jobs to the failed set, counts them, then calls then().
	void RunFail(std::vector<FailItem> items, std::function<void()> then)
	{
		RunFinish(
		    "fail", [this, items] { return FailCall(keys, WallMs(), items); }, items,
		    [this, then](const std::vector<int64_t> &st) {
			    for (int64_t s : st)
				    if (s == 0)
					    metrics.jobs_failed++;
			    then();
		    });
	}

	void FailPoison(BatchPtr b)
	{
		std::vector<FailItem> items;
		for (const auto &bj : b->jobs)
			if (!bj.fail_reason.empty())
				items.push_back(FailItemFor(bj, bj.fail_reason));
		RunFail(std::move(items), [this, b] {
			b->fail_done = true;
			FinishBatchIfDone(b);
		});
	}

	// Prefetch fetches the next batch during this one's inbox write. When nothing is waiting it
	// costs one empty fetch, and the message in flight waits for none of it.
	void Prefetch()
	{
		if (prefetched || fetching || recovering || need_recovery || stopping || finished || !cmd.Ready())
			return;
		Fetch();
	}

	// ReadHighWater reads the inbox's highest seq into delivered_up_to, then writes the batch waiting for it.
	void ReadHighWater()
	{
		if (reading_high_water || delivered_up_to)
			return;
		reading_high_water = true;
		writer.ReadHighWater([this](std::optional<int64_t> high) {
			reading_high_water = false;
			if (finished)
				return;
			if (high)
				delivered_up_to = *high;
			if (!batch)
				return;
			if (high)
				WriteInbox();
			else // connection failures are logged by the PgClient; its reconnect reads again
				inbox_retry_timer.Start(static_cast<uint64_t>(inbox_backoff.Next()), [this] {
					if (batch && !finished)
						WriteInbox();
				});
		});
	}

	void WriteInbox()
	{
		if (!delivered_up_to) {
			ReadHighWater();
			return;
		}
		Prefetch();
		std::vector<ChatMessage> msgs;
		for (const auto &bj : batch->jobs)
			if (bj.ToInbox()) {
				msgs.push_back(*bj.msg);
				if (batch->drop_created_at)
					msgs.back().created_at.reset();
			}
		writer.Write(msgs, delivered_up_to, [this](InboxWriteResult &&res) {
			if (finished || !batch)
				return;
			if (!res.ok && res.sqlstate.rfind("22", 0) == 0 && !batch->drop_created_at) {
				// Validation leaves only created_at for Postgres to reject (data exception class 22);
				// retrying without it beats holding the queue on one bad timestamp forever.
				Log(Level::Warning, "inbox rejected the batch (%s); writing it again without created_at",
				    res.error.c_str());
				batch->drop_created_at = true;
				WriteInbox();
				return;
			}
			if (!res.ok && !res.connection_lost && RowRejected(res.sqlstate)) {
				// One message's row is refused (a constraint, a trigger, bad data): find it instead of
				// holding the whole queue behind it.
				Log(Level::Warning, "inbox refused the batch (%s, SQLSTATE %s); writing its messages one by one",
				    res.error.c_str(), res.sqlstate.c_str());
				batch->isolated = InboxWriteResult();
				batch->isolated.ok = true;
				IsolateFrom(0);
				return;
			}
			if (!res.ok) {
				// Connection failures are logged by the PgClient; anything else (a missing table,
				// a permission) is logged here, once until it works again.
				if (!res.connection_lost && !inbox_failing)
					Log(Level::Warning, "inbox write failed: %s%s%s (batch kept, retrying)", res.error.c_str(),
					    res.sqlstate.empty() ? "" : " SQLSTATE ", res.sqlstate.c_str());
				inbox_failing = inbox_failing || !res.connection_lost;
				inbox_retry_timer.Start(static_cast<uint64_t>(inbox_backoff.Next()), [this] {
					if (batch && !finished)
						WriteInbox();
				});
				return;
			}
			if (inbox_failing)
				Log(Level::Notice, "inbox write works again");
			inbox_failing = false;
			inbox_backoff.Reset();
			InboxCommitted(std::move(res));
		});
	}

	// RowRejected: SQLSTATE classes that judge a row's content (data exception, integrity constraint,
	// a raise in a trigger), as opposed to the statement or the server (permissions, a missing table,
	// shutdown): only the former are worth isolating, the latter hold the batch until they clear.
	static bool RowRejected(const std::string &sqlstate)
	{
		return sqlstate.rfind("22", 0) == 0 || sqlstate.rfind("23", 0) == 0 || sqlstate.rfind("P0", 0) == 0;
	}

	// IsolateFrom writes the batch's messages one at a time, in queue order, from job i on. A refused
	// message is taken out of the batch (RejectRows retries it per its attempts/backoff or fails it);
	// the accepted ones continue as one commit. Server trouble half-way sends the whole batch back to
	// the normal retry, marked as of unknown outcome so the rows already written are still pushed.
	void IsolateFrom(size_t i)
	{
		while (i < batch->jobs.size() && !batch->jobs[i].msg)
			i++;
		if (i == batch->jobs.size()) {
			InboxWriteResult res = std::move(batch->isolated);
			RejectRows();
			InboxCommitted(std::move(res));
			return;
		}
		ChatMessage m = *batch->jobs[i].msg;
		if (batch->drop_created_at)
			m.created_at.reset();
		writer.Write({m}, delivered_up_to, [this, i](InboxWriteResult &&r) {
			if (finished || !batch)
				return;
			BatchJob &bj = batch->jobs[i];
			if (r.ok) {
				batch->isolated.Add(std::move(r));
				IsolateFrom(i + 1);
				return;
			}
			if (!r.connection_lost && RowRejected(r.sqlstate)) {
				bj.rejected = "inbox refused the message: " + r.error + " (SQLSTATE " + r.sqlstate + ")";
				IsolateFrom(i + 1);
				return;
			}
			for (auto &b : batch->jobs) // back to the whole batch; refused rows are found again
				b.rejected.clear();
			Log(Level::Warning, "inbox write failed while isolating a refused message: %s (batch kept, retrying)",
			    r.error.c_str());
			inbox_retry_timer.Start(static_cast<uint64_t>(inbox_backoff.Next()), [this] {
				if (batch && !finished)
					WriteInbox();
			});
		});
	}

	// RejectRows settles the messages the inbox refused, as a bullmq Worker settles a failed attempt:
	// another attempt after the job's backoff while `attempts` allows, else the failed set with the reason.
	void RejectRows()
	{
		std::vector<RetryItem> retry;
		std::vector<FailItem> fail;
		for (const auto &bj : batch->jobs) {
			if (bj.rejected.empty() || bj.lost)
				continue;
			int64_t made = bj.job.AttemptsMade() + 1;
			if (made < bj.opts.attempts) {
				Log(Level::Warning, "job %s: %s; attempt %lld of %lld, retrying", bj.job.id.c_str(), bj.rejected.c_str(),
				    static_cast<long long>(made), static_cast<long long>(bj.opts.attempts));
				retry.push_back({bj.job.id, bj.job.token, bj.rejected, BackoffDelay(bj.opts.backoff, made), bj.opts.lifo});
			} else {
				fail.push_back(FailItemFor(bj, bj.rejected));
			}
		}
		if (retry.empty() && fail.empty())
			return;
		BatchPtr b = batch;
		b->reject_done = false;
		RunFinish(
		    "retry", [this, retry] { return RetryCall(keys, WallMs(), retry); }, retry,
		    [this, fail, b](const std::vector<int64_t> &) {
			    RunFail(fail, [this, b] {
				    b->reject_done = true;
				    FinishBatchIfDone(b);
			    });
		    });
	}

	// ToPush picks what goes to clients: every committed row above what was pushed (RowsToPush).
	std::vector<InboxMessage> ToPush(InboxWriteResult &&res)
	{
		double now = WallSeconds();
		for (const auto &c : res.created)
			if (c)
				metrics.lag_seconds.Observe(std::max(0.0, now - *c));
		return RowsToPush(std::move(res), *delivered_up_to);
	}

	void InboxCommitted(InboxWriteResult &&res)
	{
		std::multiset<std::string> fresh;
		for (const auto &m : res.inserted)
			fresh.insert(m.id);
		for (auto &bj : batch->jobs) {
			if (!bj.ToInbox())
				continue;
			auto it = fresh.find(bj.msg->id);
			bj.inserted = it != fresh.end(); // the first job carrying a new id wins; later ones are duplicates
			if (bj.inserted)
				fresh.erase(it);
			else
				metrics.duplicates_skipped++;
		}
		inbox_commits++;
		size_t dups = 0, msgs = 0;
		for (const auto &bj : batch->jobs) {
			msgs += bj.ToInbox() ? 1 : 0;
			dups += bj.ToInbox() && !bj.inserted ? 1 : 0;
		}
		Log(Level::Verbose, "inbox commit: %zu job(s), %zu new, %zu duplicate(s)", msgs, msgs - dups, dups);
		if (cfg.crash_after_inbox > 0 && inbox_commits == cfg.crash_after_inbox) {
			Log(Level::Warning, "--crash-after-inbox %lld reached: SIGKILL", static_cast<long long>(inbox_commits));
			raise(SIGKILL);
		}
		std::vector<InboxMessage> push = ToPush(std::move(res));
		if (!push.empty()) {
			metrics.messages_delivered += push.size();
			delivered_up_to = std::max(*delivered_up_to, push.back().seq);
			try {
				sink.Deliver(push);
			} catch (const std::exception &e) {
				Log(Level::Warning, "delivery failed: %s", e.what()); // the rows are committed: catch-up serves them
			}
		}
		Complete(batch);
		ReleaseInbox();
	}

	// ReleaseInbox hands the inbox to the next batch; this one finishes its Redis scripts meanwhile.
	void ReleaseInbox()
	{
		BatchPtr b = std::move(batch);
		b->inbox_done = true;
		finishing.push_back(b);
		FinishBatchIfDone(b);
		Pump();
	}

	void Complete(BatchPtr b)
	{
		std::vector<CompleteItem> items;
		KeepPolicy keep;
		keep.count = cfg.remove_on_complete;
		for (const auto &bj : b->jobs) {
			if (!bj.ToInbox() || bj.lost)
				continue;
			items.push_back({bj.job.id, bj.job.token, bj.inserted ? R"({"inserted":true})" : R"({"duplicate":true})",
			                 bj.opts.remove_on_complete.value_or(keep)});
		}
		b->complete_done = false;
		RunFinish(
		    "complete", [this, items] { return CompleteCall(keys, WallMs(), items); }, items,
		    [this, items, b](const std::vector<int64_t> &st) {
			    for (size_t i = 0; i < st.size(); i++) {
				    if (st[i] == 0)
					    metrics.jobs_processed++;
				    else
					    Log(Level::Verbose, "job %s not completed: %s", items[i].id.c_str(), FinishStatusText(st[i]));
			    }
			    b->complete_done = true;
			    FinishBatchIfDone(b);
		    });
	}

	// RunFinish runs a finishing script until it answers. A lost reply is retried after the
	// reconnect (the scripts check tokens, so a second run cannot finish a job twice).
	template <typename Item>
	void RunFinish(const char *what, std::function<ScriptCall()> make, const std::vector<Item> &items,
	               std::function<void(const std::vector<int64_t> &)> done)
	{
		if (items.empty()) {
			done({});
			return;
		}
		size_t expected = items.size();
		auto again = [this, what, make, items, done] { RunFinish(what, make, items, done); };
		cmd.Eval(make(), [this, what, expected, again, done](const RedisValue *r, const std::string &err) {
			if (finished)
				return;
			if (!r) {
				Log(Level::Verbose, "%s: reply lost (%s), will run again after reconnecting", what, err.c_str());
				if (cmd.Ready())
					script_retry_timer.Start(static_cast<uint64_t>(script_backoff.Next()), again);
				else
					after_reconnect.push_back(again);
				return;
			}
			std::vector<int64_t> st;
			std::string error;
			if (!DecodeStatuses(*r, expected, &st, &error)) {
				Log(Level::Warning, "%s failed: %s (retrying)", what, error.c_str());
				script_retry_timer.Start(static_cast<uint64_t>(script_backoff.Next()), again);
				return;
			}
			script_backoff.Reset();
			done(st);
		});
	}

	void FinishBatchIfDone(const BatchPtr &b)
	{
		if (!b->inbox_done || !b->fail_done || !b->complete_done || !b->reject_done)
			return;
		auto it = std::find(finishing.begin(), finishing.end(), b);
		if (it == finishing.end())
			return;
		finishing.erase(it);
		Pump();
	}

	// ForEachStarted calls f for the batch being written and each finishing one.
	template <typename F>
	void ForEachStarted(F f)
	{
		if (batch)
			f(batch);
		for (const auto &b : finishing)
			f(b);
	}

	// ExtendLocks renews every lock we hold: the batch being written, the finishing ones and the
	// prefetched one. A lock we no longer hold means another consumer owns the job now: we stop
	// finishing it (the inbox dedupes whatever it does), and a prefetched job is dropped before it
	// is started.
	void ExtendLocks()
	{
		if (!cmd.Ready() || finished)
			return;
		std::vector<HeldLock> locks;
		ForEachStarted([&](const BatchPtr &b) {
			for (const auto &bj : b->jobs)
				if (!bj.lost)
					locks.push_back({bj.job.id, bj.job.token});
		});
		if (prefetched)
			for (const auto &job : *prefetched)
				locks.push_back({job.id, job.token});
		if (locks.empty())
			return;
		cmd.Eval(ExtendLocksCall(keys, WallMs(), cfg.lock_duration, locks),
		         [this, locks](const RedisValue *r, const std::string &) {
			         std::vector<int64_t> st;
			         std::string error;
			         if (!r || finished || !DecodeStatuses(*r, locks.size(), &st, &error))
				         return;
			         for (size_t i = 0; i < st.size(); i++) {
				         if (st[i] != 0)
					         continue;
				         // tokens are unique per fetch, so a match is this very hold of the job
				         auto mine = [&](const Job &j) { return j.id == locks[i].id && j.token == locks[i].token; };
				         ForEachStarted([&](const BatchPtr &b) {
					         for (auto &bj : b->jobs)
						         if (mine(bj.job) && !bj.lost) {
							         bj.lost = true;
							         Log(Level::Verbose, "lost the lock of job %s", bj.job.id.c_str());
						         }
				         });
				         if (prefetched) {
					         auto &p = *prefetched;
					         p.erase(std::remove_if(p.begin(), p.end(), mine), p.end());
					         if (p.empty())
						         prefetched.reset();
				         }
			         }
		         });
	}

	// --- stopping -------------------------------------------------------------------------

	void Stop(std::function<void()> done)
	{
		if (stopping)
			return;
		stopping = true;
		stop_done = std::move(done);
		stalled.Close();
		idle_timer.Stop();
		if (blocking)
			Unblock();
		stop_timer.Start(static_cast<uint64_t>(kStopDeadlineMs), [this] {
			Log(Level::Warning, "stop: gave up waiting for the batch in flight; a restart takes its jobs back");
			FinishStop();
		});
		MaybeFinishStop();
	}

	// Unblock ends our BZPOPMIN now, so the fetch queued behind it runs and answers (a batch it
	// takes is delivered before the stop completes). Without the right to CLIENT UNBLOCK, dropping
	// the connection ends it too: a fetch that ran anyway leaves its jobs to the next start's recovery.
	void Unblock()
	{
		cmd.Command({"CLIENT", "UNBLOCK", std::to_string(blk.ClientId())},
		            [this](const RedisValue *r, const std::string &) {
			            if (blocking && (!r || r->IsError()))
				            blk.Drop("stopping");
		            });
	}

	void MaybeFinishStop()
	{
		if (stopping && !finished && !batch && !prefetched && finishing.empty() && !fetching && !recovering)
			FinishStop();
	}

	void FinishStop()
	{
		if (finished)
			return;
		finished = true;
		batch.reset();
		prefetched.reset();
		finishing.clear();
		auto remaining = std::make_shared<int>(5);
		auto one = [this, remaining] {
			if (--*remaining == 0 && stop_done) {
				auto done = std::move(stop_done);
				done();
			}
		};
		for (UvTimer *t : {&extend_timer, &idle_timer, &inbox_retry_timer, &script_retry_timer, &stop_timer})
			t->Close(one);
	}
};

BullmqConsumer::BullmqConsumer(uv_loop_t *loop, const Config &cfg, RedisConn &cmd, RedisConn &blocking, PgClient &pg,
                               MessageSink &sink, Metrics &metrics)
    : impl_(std::make_unique<Impl>(loop, cfg, cmd, blocking, pg, sink, metrics))
{
}

BullmqConsumer::~BullmqConsumer() = default;

void
BullmqConsumer::Start(std::function<void(int)> on_fatal)
{
	impl_->on_fatal = std::move(on_fatal);
	impl_->Start();
}

void
BullmqConsumer::Stop(std::function<void()> done)
{
	impl_->Stop(std::move(done));
}

} // namespace chat_outboxd
