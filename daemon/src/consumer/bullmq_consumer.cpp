// daemon/src/consumer/bullmq_consumer.cpp - see bullmq_consumer.hpp for the cycle; this file is its state machine.
//
// The state, and the rules it keeps:
//   - `life`: connecting, running, stopping (finishing what is held), stopped;
//   - under its partition's lease: nothing new (a fetch, a batch) starts unless the lease is surely
//     ours, and the fetch and recovery scripts are fenced by it in Redis;
//   - `redis`: what the command side is doing for the fetch loop. Recovering, fetching and waiting
//     (BZPOPMIN with the fetch queued behind it) exclude one another by being one value;
//   - the inbox stage holds at most one batch (queue order to clients); `prefetched` is the batch
//     fetched during its write; `finishing` are the batches whose Redis scripts still run. A
//     prefetched batch starts before anything else, and a recovery waits until none of the three
//     holds jobs (it would take back jobs we still hold);
//   - nothing is completed before its inbox row is committed;
//   - finishing scripts check lock tokens, so running one again after a lost reply is harmless;
//     the fetch is not idempotent, so a lost fetch reply is repaired by the identity recovery.
#include "consumer/bullmq_consumer.hpp"

#include <algorithm>
#include <optional>

#include "common/backoff.hpp"
#include "base/log.hpp"
#include "base/uv_timer.hpp"
#include "base/wall_clock.hpp"
#include "consumer/core/batch.hpp"
#include "consumer/core/bullmq_calls.hpp"
#include "consumer/core/bullmq_identity.hpp"
#include "consumer/inbox_stage.hpp"
#include "consumer/stalled_checker.hpp"

namespace chat_outboxd {

namespace {

constexpr double kMaxBlockSeconds = 5.0; // BZPOPMIN timeout, as bullmq's drainDelay

enum class Life {
	Connecting, // until the command connection is first ready
	Running,
	Stopping, // no new work; finishing the batches held
	Stopped,  // timers closed; every late reply is ignored
};

enum class RedisStep {
	Idle,
	Recovering, // taking back jobs an earlier run of our identity left active
	Fetching,   // a fetch script is out
	Waiting,    // BZPOPMIN on the marker, the fetch queued behind it on the same connection
};

} // namespace

struct BullmqConsumer::Impl {
	uv_loop_t *loop;
	Config cfg;
	RedisCommands &cmd, &blk;
	PgClient &pg;
	Metrics &metrics;
	QueueKeys keys;
	std::string token_prefix; // <identity>:<run uuid>:
	uint64_t token_n = 1;
	InboxStage inbox;
	StalledChecker stalled;
	UvTimer extend_timer, idle_timer, script_retry_timer, stop_timer;
	chat_outbox::Backoff script_backoff{100, 5000};
	BatchPtr prefetched; // null: none
	std::vector<BatchPtr> finishing;
	std::vector<std::function<void()>> after_reconnect; // finishing steps whose reply was lost
	std::vector<std::function<void()>> after_backoff;   // finishing steps that failed: run when script_retry_timer fires
	std::function<void()> stop_done;
	Life life = Life::Connecting;
	RedisStep redis = RedisStep::Idle;
	bool recovery_owed = false; // a fetch reply may have been lost: take back what our identity holds
	ConsumerLease lease;
	bool takeover_owed = true; // the first recovery takes back earlier holders' jobs

	Impl(uv_loop_t *l, const Config &c, RedisCommands &cm, RedisCommands &bl, PgClient &p, MessageSink &s, Metrics &m,
	     ConsumerLease ls)
	    : loop(l), cfg(c), cmd(cm), blk(bl), pg(p), metrics(m), keys(c.prefix, c.queue),
	      token_prefix(c.identity + ":" + NewUuid() + ":"), inbox(l, p, cfg, s, m),
	      stalled(l, cm, keys, c.stalled_interval, m), extend_timer(l, "extend-locks"), idle_timer(l, "fetch-idle"),
	      script_retry_timer(l, "script-retry"), stop_timer(l, "stop-deadline"), lease(std::move(ls))
	{
		inbox.OnAttempt([this] { Prefetch(); });
	}

	bool Live() const { return life == Life::Running || life == Life::Stopping; }

	// MayStart: a new fetch or batch may begin: only while the lease is surely ours.
	bool MayStart() const { return lease.valid(); }

	// FencedOut: the reply is the lease fence's refusal; the manager learns the lease is gone.
	bool FencedOut(const RedisValue *r)
	{
		if (!r || !r->IsError() || !IsNoLease(r->str))
			return false;
		lease.on_lost();
		return true;
	}

	// --- wiring ---------------------------------------------------------------------------

	void Start()
	{
		// The partition manager reports the daemon's health (redis_up, postgres_up): a daemon runs
		// several consumers, or none.
		cmd.OnReady([this] { OnCommandReady(); });
		cmd.OnDown([this] {
			recovery_owed = true; // a fetch reply may have been lost with the connection
		});
		blk.OnReady([this] { Pump(); });
		pg.OnStateChange([this](bool up) {
			if (up) {
				inbox.OnConnected();
				Pump();
			}
		});
		uint64_t half = static_cast<uint64_t>(cfg.lock_duration / 2);
		extend_timer.Start(
		    half, [this] { ExtendLocks(); }, half);
		cmd.Start();
		blk.Start();
		pg.Start();
	}

	void OnCommandReady()
	{
		if (life == Life::Connecting) {
			StartRunning();
			return;
		}
		if (!Live())
			return;
		auto steps = std::move(after_reconnect);
		after_reconnect.clear();
		for (auto &s : steps)
			s();
		Pump();
	}

	void StartRunning()
	{
		life = Life::Running;
		recovery_owed = true;
		Log(Level::Notice, "consuming %s%s as '%s' into %s.inbox", keys.Base().c_str(), "*", cfg.identity.c_str(),
		    cfg.service.c_str());
		stalled.Start();
		Pump();
	}

	// --- the fetch loop ---------------------------------------------------------------------

	void Pump()
	{
		if (!Live() || inbox.Current() || redis != RedisStep::Idle) {
			MaybeFinishStop();
			return;
		}
		if (prefetched) {
			// before any recovery: a recovery would take these jobs, which we still hold, back to wait
			BatchPtr b = std::move(prefetched);
			prefetched.reset();
			if (!MayStart()) { // the lease's next holder takes them back
				MaybeFinishStop();
				return;
			}
			StartBatch(std::move(b));
			return;
		}
		if (life == Life::Stopping) {
			MaybeFinishStop();
			return;
		}
		if (!cmd.Ready() || !pg.Connected() || !MayStart())
			return;
		if (recovery_owed) {
			if (finishing.empty()) // a recovery would take their jobs back before their scripts ran
				Recover();
			return;
		}
		Fetch();
	}

	void Recover()
	{
		redis = RedisStep::Recovering;
		bool takeover = takeover_owed;
		auto call = RecoverIdentityCall(keys, WallMs(), cfg.identity, takeover, lease.holder);
		cmd.Eval(call, [this, takeover](const RedisValue *r, const std::string &) {
			redis = RedisStep::Idle;
			if (!Live())
				return;
			if (!r || FencedOut(r)) {
				MaybeFinishStop();
				return; // OnCommandReady pumps again
			}
			if (r->IsError()) {
				Log(Level::Warning, "identity recovery failed: %s", r->str.c_str());
				idle_timer.Start(1000, [this] { Pump(); });
				return;
			}
			recovery_owed = false;
			if (takeover)
				takeover_owed = false;
			if (!r->elements.empty())
				Log(Level::Notice, "took back %zu job(s) left active by %s", r->elements.size(),
				    takeover ? ("an earlier holder of " + cfg.queue).c_str()
				             : ("an earlier run of '" + cfg.identity + "'").c_str());
			Pump();
		});
	}

	ScriptCall NextFetchCall(int64_t now_ms)
	{
		uint64_t first = token_n;
		token_n += static_cast<uint64_t>(cfg.batch_size);
		return FetchCall(keys, now_ms, token_prefix, first, cfg.lock_duration, cfg.batch_size, cfg.identity,
		                 lease.holder);
	}

	void Fetch()
	{
		redis = RedisStep::Fetching;
		cmd.Eval(NextFetchCall(WallMs()), [this](const RedisValue *r, const std::string &) { OnFetched(r); });
	}

	void OnFetched(const RedisValue *r)
	{
		redis = RedisStep::Idle;
		if (!Live())
			return;
		if (!r) {
			recovery_owed = true; // the script may have run and locked jobs for us
			MaybeFinishStop();
			return;
		}
		if (FencedOut(r)) {
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
		if (inbox.Current()) { // a prefetch
			if (!fr.jobs.empty())
				prefetched = MakeBatch(std::move(fr.jobs));
			return; // the batch's end pumps
		}
		if (!fr.jobs.empty() && !MayStart()) { // fetched under the lease, which may be another's by now
			MaybeFinishStop();
			return;
		}
		if (fr.jobs.empty()) {
			if (life == Life::Stopping)
				MaybeFinishStop();
			else
				Wait(fr);
			return;
		}
		StartBatch(MakeBatch(std::move(fr.jobs)));
	}

	// Wait sleeps until the marker says there is work, a delayed job is due or the timeout passes.
	// The fetch goes out right behind the BZPOPMIN on the same connection, so Redis runs it the
	// moment the block ends: a message arriving at an idle daemon costs one round trip to Redis,
	// not two. It reads Redis's clock, since it runs whenever the block ends. Nothing else fetches
	// meanwhile (`redis` is Waiting, then Fetching), and Stop unblocks it rather than wait out the timeout.
	void Wait(const FetchResult &fr)
	{
		if (fr.rate_limited_ms > 0) {
			idle_timer.Start(static_cast<uint64_t>(fr.rate_limited_ms), [this] { Pump(); });
			return;
		}
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
		redis = RedisStep::Waiting;
		blk.Command(
		    {"BZPOPMIN", keys.Key("marker"), t},
		    [this](const RedisValue *, const std::string &) {
			if (redis == RedisStep::Waiting)
				redis = RedisStep::Fetching;
		    },
		    deadline);
		blk.Eval(
		    NextFetchCall(kRedisClock), [this](const RedisValue *r, const std::string &) { OnFetched(r); },
		    deadline + 5000);
	}

	// --- one batch --------------------------------------------------------------------------

	void StartBatch(BatchPtr b)
	{
		metrics.batch_size.Observe(static_cast<double>(b->jobs.size()));
		for (const auto &bj : b->jobs)
			NoteStalls(bj.job);
		Log(Level::Debug, "batch of %zu job(s), first %s", b->jobs.size(), b->jobs[0].job.id.c_str());
		if (b->AnyBad())
			FailBad(b);
		if (b->AnyMessage())
			inbox.Write(b, [this](BatchPtr w) { InboxDone(std::move(w)); });
		else
			ReleaseInbox(b);
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

	// Prefetch fetches the next batch during this one's inbox write. When nothing is waiting it
	// costs one empty fetch, and the message in flight waits for none of it.
	void Prefetch()
	{
		if (prefetched || redis != RedisStep::Idle || recovery_owed || life != Life::Running || !cmd.Ready() ||
		    !MayStart())
			return;
		Fetch();
	}

	// InboxDone: the batch is committed and pushed; its Redis scripts run while the next batch is written.
	void InboxDone(BatchPtr b)
	{
		RejectRows(b);
		Complete(b);
		ReleaseInbox(b);
	}

	// ReleaseInbox hands the inbox to the next batch; this one finishes its Redis scripts meanwhile.
	void ReleaseInbox(const BatchPtr &b)
	{
		finishing.push_back(b);
		Settle(b);
		Pump();
	}

	// Begin counts a part of the batch that has started; Settle one that has ended. A batch with no
	// part left is done: its locks are no longer extended, and a recovery may run.
	static void Begin(const BatchPtr &b) { b->pending++; }

	void Settle(const BatchPtr &b)
	{
		if (--b->pending > 0)
			return;
		auto it = std::find(finishing.begin(), finishing.end(), b);
		if (it == finishing.end())
			return;
		finishing.erase(it);
		Pump();
	}

	// --- finishing scripts ------------------------------------------------------------------

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

	void FailBad(const BatchPtr &b)
	{
		std::vector<FailItem> items;
		for (const auto &bj : b->jobs)
			if (!bj.fail_reason.empty())
				items.push_back(FailItemFor(bj, bj.fail_reason));
		Begin(b);
		RunFail(std::move(items), [this, b] { Settle(b); });
	}

	// RejectRows settles the messages the inbox refused, as a bullmq Worker settles a failed attempt:
	// another attempt after the job's backoff while `attempts` allows, else the failed set with the reason.
	void RejectRows(const BatchPtr &b)
	{
		std::vector<RetryItem> retry;
		std::vector<FailItem> fail;
		for (const auto &bj : b->jobs) {
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
		Begin(b);
		RunFinish(
		    "retry", [this, retry] { return RetryCall(keys, WallMs(), retry); }, retry,
		    [this, fail, b](const std::vector<int64_t> &) { RunFail(fail, [this, b] { Settle(b); }); });
	}

	void Complete(const BatchPtr &b)
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
		Begin(b);
		RunFinish(
		    "complete", [this, items] { return CompleteCall(keys, WallMs(), items); }, items,
		    [this, items, b](const std::vector<int64_t> &st) {
			for (size_t i = 0; i < st.size(); i++) {
				if (st[i] == 0)
					metrics.jobs_processed++;
				else
					Log(Level::Verbose, "job %s not completed: %s", items[i].id.c_str(), FinishStatusText(st[i]));
			}
			Settle(b);
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
			if (life == Life::Stopped)
				return;
			if (!r) {
				Log(Level::Verbose, "%s: reply lost (%s), will run again after reconnecting", what, err.c_str());
				if (cmd.Ready())
					AfterBackoff(again);
				else
					after_reconnect.push_back(again);
				return;
			}
			std::vector<int64_t> st;
			std::string error;
			if (!DecodeStatuses(*r, expected, &st, &error)) {
				Log(Level::Warning, "%s failed: %s (retrying)", what, error.c_str());
				AfterBackoff(again);
				return;
			}
			script_backoff.Reset();
			done(st);
		});
	}

	// AfterBackoff runs a failed finishing step again after the scripts' backoff. Several batches
	// finish at once (a Redis restart fails each one's script): every step waiting is kept and all
	// run when the one timer fires, since starting the timer again replaces what it would run, and a
	// batch whose step was dropped would never settle, its partition's consumer waiting on it for good.
	void AfterBackoff(std::function<void()> step)
	{
		after_backoff.push_back(std::move(step));
		if (after_backoff.size() > 1)
			return; // the timer runs it with the others
		script_retry_timer.Start(static_cast<uint64_t>(script_backoff.Next()), [this] {
			auto steps = std::move(after_backoff);
			after_backoff.clear();
			for (auto &s : steps)
				s();
		});
	}

	// --- locks --------------------------------------------------------------------------------

	// ForEachHeld calls f for every batch whose locks we hold: the one being written, each finishing
	// one and the prefetched one.
	template <typename F>
	void ForEachHeld(F f)
	{
		if (inbox.Current())
			f(inbox.Current());
		for (const auto &b : finishing)
			f(b);
		if (prefetched)
			f(prefetched);
	}

	// ExtendLocks renews every lock we hold: the batch being written, the finishing ones and the
	// prefetched one. A lock we no longer hold (it expired while Redis hung, or another consumer
	// took the job) means we stop finishing the job, but it is still written to the inbox in its
	// place, a prefetched one too: dropping it would let the jobs fetched after it reach the inbox
	// first, out of their chat's order, while it waits for a stalled check (the inbox dedupes a job
	// that someone else writes as well).
	void ExtendLocks()
	{
		if (!cmd.Ready() || life == Life::Stopped)
			return;
		std::vector<HeldLock> locks;
		ForEachHeld([&](const BatchPtr &b) {
			for (const auto &bj : b->jobs)
				if (!bj.lost)
					locks.push_back({bj.job.id, bj.job.token});
		});
		if (locks.empty())
			return;
		cmd.Eval(ExtendLocksCall(keys, WallMs(), cfg.lock_duration, locks),
		         [this, locks](const RedisValue *r, const std::string &) {
			std::vector<int64_t> st;
			std::string error;
			if (!r || life == Life::Stopped || !DecodeStatuses(*r, locks.size(), &st, &error))
				return;
			for (size_t i = 0; i < st.size(); i++)
				if (st[i] == 0)
					LostLock(locks[i]);
		});
	}

	void LostLock(const HeldLock &lock)
	{
		// tokens are unique per fetch, so a match is this very hold of the job
		auto mine = [&](const Job &j) { return j.id == lock.id && j.token == lock.token; };
		ForEachHeld([&](const BatchPtr &b) {
			for (auto &bj : b->jobs)
				if (mine(bj.job) && !bj.lost) {
					bj.lost = true;
					Log(Level::Verbose, "lost the lock of job %s", bj.job.id.c_str());
				}
		});
	}

	// --- stopping -------------------------------------------------------------------------

	void Stop(std::function<void()> done)
	{
		if (life == Life::Stopping || life == Life::Stopped)
			return;
		life = Life::Stopping;
		stop_done = std::move(done);
		stalled.Close();
		idle_timer.Stop();
		if (redis == RedisStep::Waiting)
			Unblock();
		stop_timer.Start(static_cast<uint64_t>(cfg.stop_timeout), [this] {
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
			if (redis == RedisStep::Waiting && (!r || r->IsError()))
				blk.Drop("stopping");
		});
	}

	void MaybeFinishStop()
	{
		if (life == Life::Stopping && !inbox.Current() && !prefetched && finishing.empty() &&
		    redis == RedisStep::Idle)
			FinishStop();
	}

	void FinishStop()
	{
		if (life == Life::Stopped)
			return;
		life = Life::Stopped;
		prefetched.reset();
		finishing.clear();
		CloseAll(
		    [this] {
			if (stop_done) {
				auto done = std::move(stop_done);
				done();
			}
		    },
		    inbox, extend_timer, idle_timer, script_retry_timer, stop_timer);
	}
};

BullmqConsumer::BullmqConsumer(uv_loop_t *loop, const Config &cfg, RedisCommands &cmd, RedisCommands &blocking, PgClient &pg,
                               MessageSink &sink, Metrics &metrics, ConsumerLease lease)
    : impl_(std::make_unique<Impl>(loop, cfg, cmd, blocking, pg, sink, metrics, std::move(lease)))
{
}

BullmqConsumer::~BullmqConsumer() = default;

void
BullmqConsumer::Start()
{
	impl_->Start();
}

void
BullmqConsumer::Stop(std::function<void()> done)
{
	impl_->Stop(std::move(done));
}

} // namespace chat_outboxd
