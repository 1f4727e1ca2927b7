// daemon/src/consumer/partition_manager.cpp - see partition_manager.hpp; the I/O around the lease
// table of consumer/core/lease.hpp.
//
// Rules it keeps:
//   - a partition's consumer exists only from Held until its stop completes (Draining or Lost),
//     and its connections are closed before its lease is released, so a partition is never
//     worked by two daemons at once;
//   - a lease counts as ours only until the ttl after the last confirmed acquire or renewal was
//     SENT (monotonic clock): Redis ran it no earlier, so locally the lease ends before its key does;
//   - every lease change is logged once, when the state changes.
#include "consumer/partition_manager.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <random>

#include "base/log.hpp"
#include "base/uv_handle.hpp"
#include "base/uv_timer.hpp"
#include "common/bullmq/queue_keys.hpp"
#include "consumer/bullmq_consumer.hpp"
#include "consumer/core/bullmq_identity.hpp"
#include "consumer/core/lease.hpp"
#include "consumer/core/partition_assignment.hpp"
#include "consumer/core/partition_calls.hpp"
#include "consumer/identity_guard.hpp"
#include "net/pg_client.hpp"
#include "common/partitions.hpp"

namespace chat_outboxd {

namespace {

constexpr int64_t kRedisTimeoutMs = 10000;
// The manager's own stop deadline is this much longer than a consumer's (--stop-timeout): the consumers
// give up first, then it releases their leases.
constexpr int64_t kManagerStopMarginMs = 5000;
constexpr int64_t kRetryMarginMs = 5; // an acquire retried this long after the other's lease ends

// ProcessToken: this process's part of its leases' value, drawn from the system's random source, so
// that a process started again under the same identity (or a copy of a paused one) draws another.
uint64_t
ProcessToken()
{
	std::random_device rd;
	return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

enum class Phase {
	CheckingIdentity, // refusing to run beside a live daemon with our identity
	Running,
	Stopping, // draining every partition and releasing its lease
	Leaving,  // deregistering
	Stopped,
};

int64_t
MonotonicMs()
{
	return static_cast<int64_t>(uv_hrtime() / 1000000);
}

// Worker is one held partition's consumer with its own connections (Redis on the partition's
// shard, Postgres for the inbox).
struct Worker {
	Config cfg;
	std::unique_ptr<RedisCommands> cmd, blk;
	std::unique_ptr<PgClient> pg;
	std::unique_ptr<BullmqConsumer> consumer;
	bool stopping = false; // its consumer was told to stop
	bool closing = false;  // its consumer stopped; its connections are closing
};

struct Slot {
	int64_t partition = 0;
	size_t shard = 0;
	LeaseState state = LeaseState::Free;
	int64_t valid_until = 0; // monotonic ms
	bool renewing = false;
	bool counting = false; // an LLEN of its wait list is out
	int64_t waiting = -1;  // jobs in its wait list at the last count (/metrics); -1: not counted
	std::unique_ptr<Worker> worker;
};

} // namespace

struct PartitionManager::Impl {
	uv_loop_t *loop;
	Config cfg;
	std::vector<chat_outbox::RedisUrl> urls;
	MessageSink &sink;
	Metrics &metrics;
	SentinelWatchers *watchers; // the daemon's Sentinel watch (main.cpp owns it)
	LeaseTiming timing;
	std::string holder; // our leases' value: our identity and this process's token (core/lease.hpp)
	std::vector<int64_t> left_out;
	std::vector<std::unique_ptr<StateLog>> redis_logs; // per shard: "redis", or "redis shard <i>" of several
	// one per shard: members, layout and leases (on a cluster the one shard's link reaches every master)
	std::vector<std::unique_ptr<RedisCommands>> conns;
	UvTimer tick_timer, stop_timer, retry_timer;
	int64_t retry_due = 0;                        // monotonic ms retry_timer fires at
	std::map<std::string, Slot> slots;            // by partition queue name
	std::vector<std::unique_ptr<Worker>> retired; // stopped and closed; freed at the next tick
	std::vector<std::string> members;
	std::vector<std::string> target; // the partition queues this daemon should work
	int64_t partitions = 0;          // 0 until the layout is first read
	std::string bad_layout;          // the layout value last refused (logged once)
	bool heartbeat_out = false, identity_out = false;
	Phase phase = Phase::CheckingIdentity;
	std::function<void(int)> on_fatal;
	std::function<void()> stop_done;

	Impl(uv_loop_t *l, const Config &c, std::vector<chat_outbox::RedisUrl> u, MessageSink &s, Metrics &m,
	     SentinelWatchers *w)
	    : loop(l), cfg(c), urls(std::move(u)), sink(s), metrics(m), watchers(w), timing(LeaseTimingFor(c.lease_ttl)),
	      holder(LeaseHolder(c.identity, ProcessToken())),
	      tick_timer(l, "lease-tick"), stop_timer(l, "lease-stop"), retry_timer(l, "lease-retry")
	{
		std::string error;
		ParsePartitionList(cfg.leave_partitions, &left_out, &error); // checked by main before
		std::string name = ConnectionName(cfg.prefix, cfg.queue, cfg.identity) + ":leases";
		for (size_t i = 0; i < urls.size(); i++) {
			std::string shard = chat_outbox::ShardName(i, urls.size());
			redis_logs.push_back(std::make_unique<StateLog>(shard));
			// on a cluster: homed on the members key's slot (the identity check's CLIENT LIST asks that
			// master, where every daemon of the service has its leases connection), every master connected
			conns.push_back(MakeRedisCommands(loop, urls[i], chat_outbox::bullmq::QueueKey(cfg.prefix, cfg.queue, "members"),
			                                  true, shard, name, kRedisTimeoutMs, redis_logs.back().get(), watchers));
		}
	}

	// --- wiring -------------------------------------------------------------------------------

	void Start()
	{
		for (auto &c : conns) {
			c->OnReady([this] {
				UpdateRedisUp();
				if (phase == Phase::CheckingIdentity)
					CheckOurIdentity();
				else if (phase == Phase::Running)
					Tick(); // back after an outage (a failover): heartbeat, renew, acquire now, not a tick later
			});
			c->OnDown([this] { UpdateRedisUp(); });
			c->Start();
		}
		uint64_t tick = static_cast<uint64_t>(timing.tick_ms);
		tick_timer.Start(
		    tick, [this] { Tick(); }, tick);
	}

	void UpdateRedisUp()
	{
		bool up = true;
		for (auto &c : conns)
			up = up && c->Ready();
		metrics.redis_up = up;
	}

	void CheckOurIdentity()
	{
		if (identity_out || !conns[0]->Ready())
			return;
		identity_out = true;
		std::string name = ConnectionName(cfg.prefix, cfg.queue, cfg.identity) + ":leases";
		CheckIdentity(*conns[0], name, [this](IdentityCheck result, int64_t other) {
			identity_out = false;
			if (phase != Phase::CheckingIdentity)
				return;
			if (result == IdentityCheck::Clash) {
				Log(Level::Warning,
				    "another chat-outboxd with identity '%s' is running on queue %s (redis client %lld); "
				    "refusing to run",
				    cfg.identity.c_str(), cfg.queue.c_str(), static_cast<long long>(other));
				if (on_fatal)
					on_fatal(3);
				return;
			}
			if (result == IdentityCheck::Unknown)
				return; // the next tick asks again
			phase = Phase::Running;
			Log(Level::Notice,
			    "sharing the partitions of %s as '%s' (%zu shard(s), lease ttl %lld ms, renewed every %lld ms)",
			    cfg.queue.c_str(), cfg.identity.c_str(), conns.size(), static_cast<long long>(timing.ttl_ms),
			    static_cast<long long>(timing.tick_ms));
			Tick();
		});
	}

	// --- the tick -----------------------------------------------------------------------------

	void Tick()
	{
		retired.clear();
		if (phase == Phase::CheckingIdentity) {
			CheckOurIdentity();
			return;
		}
		if (phase == Phase::Stopped || phase == Phase::Leaving)
			return;
		int64_t now = MonotonicMs();
		for (auto &[queue, slot] : slots)
			if (RenewsLease(slot.state) && now >= slot.valid_until)
				Event(queue, LeaseEvent::Expired);
		// renewals first: our member entry then outlives the leases renewed in the same tick, so a
		// member that sees us gone finds our leases gone too (or about to go: RetryAfter)
		for (auto &[queue, slot] : slots)
			if (RenewsLease(slot.state))
				Renew(queue, slot);
		if (phase == Phase::Running)
			SendHeartbeat();
		for (auto &[queue, slot] : slots)
			if (slot.state == LeaseState::Held)
				CountWaiting(queue, slot);
		StepAll();
	}

	// CountWaiting reads the length of a held partition's wait list for /metrics (its backlog in
	// Redis), one LLEN per tick at most.
	void CountWaiting(const std::string &queue, Slot &slot)
	{
		if (slot.counting || !conns[slot.shard]->Ready())
			return;
		slot.counting = true;
		conns[slot.shard]->Command({"LLEN", chat_outbox::bullmq::QueueKey(cfg.prefix, queue, "wait")},
		                           [this, queue](const RedisValue *r, const std::string &) {
			auto it = slots.find(queue);
			if (it == slots.end())
				return;
			it->second.counting = false;
			it->second.waiting =
			    r && r->type == RedisValue::Type::Integer ? r->integer : -1;
			UpdateFigures();
		});
	}

	void SendHeartbeat()
	{
		if (heartbeat_out || !conns[0]->Ready())
			return;
		heartbeat_out = true;
		conns[0]->Eval(HeartbeatCall(cfg.prefix, cfg.queue, cfg.identity, timing.member_ttl_ms),
		               [this](const RedisValue *r, const std::string &) {
			heartbeat_out = false;
			if (!r || phase != Phase::Running)
				return;
			Heartbeat hb;
			std::string error;
			if (!DecodeHeartbeat(*r, &hb, &error)) {
				Log(Level::Warning, "members heartbeat failed: %s", error.c_str());
				return;
			}
			OnHeartbeat(hb);
		});
	}

	void OnHeartbeat(const Heartbeat &hb)
	{
		int64_t n = 1;
		if (hb.layout) {
			auto parsed = chat_outbox::ParseLayout(hb.layout);
			if (!parsed) {
				if (bad_layout != *hb.layout)
					Log(Level::Warning, "%s; keeping %lld partition(s)",
					    chat_outbox::LayoutValueProblem(cfg.queue, *hb.layout).c_str(), static_cast<long long>(partitions));
				bad_layout = *hb.layout;
				if (partitions == 0)
					return; // nothing to follow yet
				n = partitions;
			} else {
				n = *parsed;
				bad_layout.clear();
			}
		}
		if (n != partitions)
			Log(Level::Notice, "queue %s has %lld partition(s)%s", cfg.queue.c_str(), static_cast<long long>(n),
			    partitions ? (" (was " + std::to_string(partitions) + ")").c_str() : "");
		if (hb.members != members) {
			std::string list;
			for (const auto &m : hb.members)
				list += (list.empty() ? "" : ", ") + m;
			Log(Level::Notice, "consumers of %s: %s", cfg.queue.c_str(), list.c_str());
		}
		partitions = n;
		members = hb.members;
		metrics.partitions = n;
		target.clear();
		for (int64_t p : PartitionsOf(cfg.identity, members, n, left_out)) {
			std::string queue = chat_outbox::PartitionQueue(cfg.queue, static_cast<int>(n), static_cast<int>(p));
			target.push_back(queue);
			Slot &slot = slots[queue];
			slot.partition = p;
			slot.shard = chat_outbox::ShardOf(static_cast<int>(p), static_cast<int>(conns.size()));
		}
		StepAll();
	}

	bool Wanted(const std::string &queue) const
	{
		return phase == Phase::Running && std::find(target.begin(), target.end(), queue) != target.end();
	}

	// StepAll gives every partition a Tick and forgets those with nothing left to do.
	void StepAll()
	{
		std::vector<std::string> queues;
		for (auto &[queue, slot] : slots)
			queues.push_back(queue);
		for (const auto &q : queues)
			Event(q, LeaseEvent::Tick);
		for (auto it = slots.begin(); it != slots.end();) {
			if (it->second.state == LeaseState::Free && !it->second.worker && !Wanted(it->first))
				it = slots.erase(it);
			else
				++it;
		}
		UpdateFigures();
		MaybeLeave();
	}

	// --- the lease table's actions ------------------------------------------------------------

	void Event(const std::string &queue, LeaseEvent ev)
	{
		auto it = slots.find(queue);
		if (it == slots.end())
			return;
		Slot &s = it->second;
		if (ev == LeaseEvent::Tick && s.state == LeaseState::Free && Wanted(queue) && !conns[s.shard]->Ready())
			return; // acquire once the shard is back
		LeaseStep st = NextLeaseStep(s.state, ev, Wanted(queue));
		if (st.next != s.state) {
			LogChange(queue, s, st.next, ev);
			s.state = st.next;
			UpdateFigures();
		}
		Do(queue, s, st.action);
		if (phase == Phase::Stopping)
			MaybeLeave();
	}

	void LogChange(const std::string &queue, const Slot &s, LeaseState next, LeaseEvent ev)
	{
		long long p = static_cast<long long>(s.partition);
		const char *q = queue.c_str();
		switch (next) {
		case LeaseState::Held:
			metrics.leases_acquired++;
			Log(Level::Notice, "partition %lld (%s): lease acquired, consuming", p, q);
			break;
		case LeaseState::Draining:
			Log(Level::Notice, "partition %lld (%s): %s; finishing the jobs in flight, then releasing", p, q,
			    phase == Phase::Running ? "assigned to another consumer" : "stopping");
			break;
		case LeaseState::Lost:
			metrics.leases_lost++;
			Log(Level::Warning, "partition %lld (%s): lease lost (%s); fetching stopped", p, q,
			    ev == LeaseEvent::Expired ? "no renewal confirmed within the lease ttl"
			                              : "another consumer, or another process with our identity, holds it");
			break;
		case LeaseState::Free:
			if (s.state == LeaseState::Releasing)
				Log(Level::Notice, "partition %lld (%s): lease released", p, q);
			else if (s.state == LeaseState::Lost)
				Log(Level::Notice, "partition %lld (%s): consumer stopped after losing the lease", p, q);
			break;
		default:
			Log(Level::Debug, "partition %lld (%s): lease %s", p, q, LeaseStateName(next));
		}
	}

	void Do(const std::string &queue, Slot &s, LeaseAction action)
	{
		switch (action) {
		case LeaseAction::None:
			return;
		case LeaseAction::Acquire:
			Acquire(queue, s);
			return;
		case LeaseAction::StartConsumer:
			StartWorker(queue, s);
			return;
		case LeaseAction::Drain:
		case LeaseAction::Abort:
			StopWorker(queue, s);
			return;
		case LeaseAction::Release:
			Release(queue, s);
			return;
		}
	}

	void Acquire(const std::string &queue, Slot &s)
	{
		int64_t sent = MonotonicMs();
		conns[s.shard]->Eval(AcquireCall(cfg.prefix, queue, holder, timing.ttl_ms),
		                     [this, queue, sent](const RedisValue *r, const std::string &) {
			if (phase == Phase::Stopped)
				return;
			std::optional<AcquireResult> res = r ? DecodeAcquire(*r) : std::nullopt;
			if (r && !res)
				Log(Level::Verbose, "lease acquire of %s failed: %s", queue.c_str(),
				    r->IsError() ? r->str.c_str() : "unexpected reply");
			auto it = slots.find(queue);
			if (res && res->won && it != slots.end())
				it->second.valid_until = ValidUntil(sent, timing.ttl_ms);
			if (res && !res->won)
				RetryAfter(res->left_ms);
			Event(queue, !res       ? LeaseEvent::AcquireUnknown
			             : res->won ? LeaseEvent::AcquireWon
			                        : LeaseEvent::AcquireRefused);
		});
	}

	// RetryAfter: a lease we want expires in left_ms, sooner than the next tick (its holder died and
	// its member entry went first): try again right after it, not a tick later.
	void RetryAfter(int64_t left_ms)
	{
		if (left_ms >= timing.tick_ms)
			return;
		int64_t due = MonotonicMs() + left_ms + kRetryMarginMs;
		if (retry_timer.Active() && due >= retry_due)
			return;
		retry_due = due;
		retry_timer.Start(static_cast<uint64_t>(left_ms + kRetryMarginMs), [this] {
			if (phase == Phase::Running)
				StepAll();
		});
	}

	void Renew(const std::string &queue, Slot &s)
	{
		if (s.renewing || !conns[s.shard]->Ready())
			return;
		s.renewing = true;
		int64_t sent = MonotonicMs();
		conns[s.shard]->Eval(RenewCall(cfg.prefix, queue, holder, timing.ttl_ms),
		                     [this, queue, sent](const RedisValue *r, const std::string &) {
			auto it = slots.find(queue);
			if (phase == Phase::Stopped || it == slots.end())
				return;
			it->second.renewing = false;
			std::optional<bool> ok = r ? DecodeFlag(*r) : std::nullopt;
			if (!ok) {
				if (r) // a lost reply is the connection's to log
					Log(Level::Verbose, "lease renewal of %s failed: %s", queue.c_str(),
					    r->IsError() ? r->str.c_str() : "unexpected reply");
				return; // the ttl decides
			}
			if (!*ok) {
				Event(queue, LeaseEvent::RenewRefused);
				return;
			}
			if (RenewsLease(it->second.state))
				it->second.valid_until = ValidUntil(sent, timing.ttl_ms);
		});
	}

	void Release(const std::string &queue, Slot &s)
	{
		if (!conns[s.shard]->Ready()) { // it expires by itself within the ttl
			Event(queue, LeaseEvent::ReleaseDone);
			return;
		}
		conns[s.shard]->Eval(ReleaseCall(cfg.prefix, queue, holder),
		                     [this, queue](const RedisValue *, const std::string &) {
			if (phase != Phase::Stopped)
				Event(queue, LeaseEvent::ReleaseDone);
		});
	}

	// --- a partition's consumer -----------------------------------------------------------------

	bool LeaseValid(const std::string &queue) const
	{
		auto it = slots.find(queue);
		return it != slots.end() && RenewsLease(it->second.state) && MonotonicMs() < it->second.valid_until;
	}

	void StartWorker(const std::string &queue, Slot &s)
	{
		auto w = std::make_unique<Worker>();
		w->cfg = cfg;
		w->cfg.queue = queue;
		std::string name = ConnectionName(cfg.prefix, queue, cfg.identity);
		// on a cluster both are homed on the queue's slot: they reach only its master, and the blocking
		// connection's CLIENT UNBLOCK (sent on the commands connection) goes where it blocks
		std::string home = chat_outbox::bullmq::QueueKey(cfg.prefix, queue, "wait");
		w->cmd = MakeRedisCommands(loop, urls[s.shard], home, false, "redis " + queue + " (commands)", name,
		                           kRedisTimeoutMs, nullptr, watchers);
		w->blk = MakeRedisCommands(loop, urls[s.shard], home, false, "redis " + queue + " (blocking)",
		                           name + ":blocking", kRedisTimeoutMs, nullptr, watchers);
		// one partition: the names a single consumer always had; several: the partition's queue too
		std::string pg_name = "chat-outboxd " + cfg.service + " inbox" + (queue == cfg.queue ? "" : " " + queue);
		w->pg = std::make_unique<PgClient>(loop, cfg.database_url, pg_name);
		ConsumerLease lease;
		lease.holder = holder;
		lease.valid = [this, queue] { return LeaseValid(queue); };
		lease.on_lost = [this, queue] { Event(queue, LeaseEvent::RenewRefused); };
		w->consumer = std::make_unique<BullmqConsumer>(loop, w->cfg, *w->cmd, *w->blk, *w->pg, sink, metrics, lease);
		s.worker = std::move(w);
		s.worker->consumer->Start();
	}

	// StopWorker stops the consumer (it fetches nothing more and finishes what it holds), closes its
	// connections, and only then reports ConsumerStopped: the lease is released after that.
	void StopWorker(const std::string &queue, Slot &s)
	{
		if (!s.worker) {
			Event(queue, LeaseEvent::ConsumerStopped);
			return;
		}
		if (s.worker->stopping)
			return;
		s.worker->stopping = true;
		s.worker->consumer->Stop([this, queue] {
			auto it = slots.find(queue);
			if (phase == Phase::Stopped || it == slots.end() || !it->second.worker)
				return; // Finish closed its connections
			Worker *w = it->second.worker.get();
			w->closing = true;
			CloseAll(
			    [this, queue] {
				auto it2 = slots.find(queue);
				if (it2 == slots.end())
					return;
				retired.push_back(std::move(it2->second.worker));
				if (phase != Phase::Stopped)
					Event(queue, LeaseEvent::ConsumerStopped);
			    },
			    *w->cmd, *w->blk, *w->pg);
		});
	}

	// --- figures ------------------------------------------------------------------------------

	void UpdateFigures()
	{
		metrics.partition_leases.clear();
		for (const auto &[queue, slot] : slots)
			metrics.partition_leases.push_back({slot.partition, queue, LeaseStateName(slot.state),
			                                    slot.state == LeaseState::Held ? slot.waiting : -1});
	}

	// --- stopping -----------------------------------------------------------------------------

	void Stop(std::function<void()> done)
	{
		if (phase == Phase::Stopping || phase == Phase::Leaving || phase == Phase::Stopped)
			return;
		bool was_running = phase == Phase::Running;
		phase = Phase::Stopping;
		stop_done = std::move(done);
		stop_timer.Start(static_cast<uint64_t>(cfg.stop_timeout + kManagerStopMarginMs), [this] {
			Log(Level::Warning, "stop: gave up releasing the leases in time; they expire within %lld ms",
			    static_cast<long long>(timing.ttl_ms));
			Finish();
		});
		if (!was_running) { // never registered, nothing held
			Finish();
			return;
		}
		StepAll();
	}

	void MaybeLeave()
	{
		if (phase != Phase::Stopping)
			return;
		for (const auto &[queue, slot] : slots)
			if (slot.state != LeaseState::Free || slot.worker)
				return;
		phase = Phase::Leaving;
		if (!conns[0]->Ready()) {
			Finish(); // our member entry expires within its ttl
			return;
		}
		conns[0]->Eval(LeaveCall(cfg.prefix, cfg.queue, cfg.identity), [this](const RedisValue *, const std::string &) {
			Log(Level::Notice, "left the consumers of %s", cfg.queue.c_str());
			Finish();
		});
	}

	void Finish()
	{
		if (phase == Phase::Stopped)
			return;
		phase = Phase::Stopped;
		// A consumer still running here is past every deadline: closing its connections fails what it
		// still waits for.
		auto left = std::make_shared<size_t>(1);
		auto one = [this, left] {
			if (--*left == 0 && stop_done) {
				auto done = std::move(stop_done);
				done();
			}
		};
		for (auto &[queue, slot] : slots)
			if (slot.worker && !slot.worker->closing) {
				*left += 3;
				slot.worker->cmd->Close(one);
				slot.worker->blk->Close(one);
				slot.worker->pg->Close(one);
			}
		*left += conns.size() + 1;
		for (auto &c : conns)
			c->Close(one);
		CloseAll(one, tick_timer, stop_timer, retry_timer);
		one();
	}
};

PartitionManager::PartitionManager(uv_loop_t *loop, const Config &cfg, std::vector<chat_outbox::RedisUrl> shards,
                                   MessageSink &sink, Metrics &metrics, SentinelWatchers *watchers)
    : impl_(std::make_unique<Impl>(loop, cfg, std::move(shards), sink, metrics, watchers))
{
}

PartitionManager::~PartitionManager() = default;

void
PartitionManager::Start(std::function<void(int)> on_fatal)
{
	impl_->on_fatal = std::move(on_fatal);
	impl_->Start();
}

void
PartitionManager::Stop(std::function<void()> done)
{
	impl_->Stop(std::move(done));
}

RedisCommands &
PartitionManager::ShardConn(size_t shard)
{
	return *impl_->conns[shard];
}

} // namespace chat_outboxd
