// relay/src/relay_loop.cpp - chat-outbox-relay's rounds (see relay_loop.hpp).
#include "relay_loop.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include "common/cluster_map_watch.hpp"
#include "common/partitions.hpp"
#include "common/redis_cluster.hpp"

namespace chat_outbox::relay {

namespace {

void
Log(const std::string &line)
{
	char stamp[32];
	std::time_t now = std::time(nullptr);
	std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
	std::fprintf(stderr, "%s chat-outbox-relay[%d]: %s\n", stamp, static_cast<int>(getpid()), line.c_str());
	std::fflush(stderr);
}

double
UnixNow()
{
	using namespace std::chrono;
	return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count() / 1000.0;
}

int64_t
MonotonicMs()
{
	using namespace std::chrono;
	return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

} // namespace

RelayLoop::RelayLoop(const RelayConfig &cfg, const std::vector<RedisUrl> &urls, MetricsServer *metrics,
                     const volatile std::sig_atomic_t *stop)
    : cfg_(cfg), metrics_(metrics), stop_(stop), db_(cfg.database_url), shard_list_(RedactedShardList(urls))
{
	figures_.redis_up.assign(urls.size(), true);
	for (const auto &url : urls) {
		shards_.push_back(OpenRedisLink(url, cfg.redis_timeout, cfg.prefix, cfg.redis_min_replicas)); // the broker kind, chosen once
		redacted_.push_back(url.Redacted());
	}
	outages_.resize(shards_.size());
	cluster_ = urls.size() == 1 && urls[0].IsCluster();
	if (std::string insecure = InsecureWarning(urls); !insecure.empty())
		Log("warning: " + insecure);
	if (cfg.wake == "logical")
		logical_ = std::make_unique<LogicalWake>(cfg.database_url, Log);
}

void
RelayLoop::Run()
{
	Publish();
	Log("relaying to " + shard_list_ + " (prefix " + cfg_.prefix + "), relay id " + cfg_.relay_id +
	    ", woken by " + (logical_ ? "NOTIFY and logical decoding" : "NOTIFY") +
	    (metrics_ ? ", /metrics on " + cfg_.metrics_listen : std::string()));
	while (!Stopping()) {
		try {
			if (!db_.Connected())
				Connect();
			RunRound();
		} catch (const PgFailure &f) {
			if (!pg_down_)
				Log(std::string("postgres unreachable: ") + f.what() + "; retrying with backoff");
			pg_down_ = true;
			figures_.postgres_up = false;
			figures_.state = RelayState::kPostgresDown;
			Publish();
			db_.Disconnect();
			if (logical_)
				logical_->Drop();
			Sleep(pg_backoff_.Next());
		}
	}
	figures_.state = RelayState::kStopping;
	Publish();
	Log("stopping");
}

void
RelayLoop::Connect()
{
	db_.Connect();
	if (pg_down_) {
		Log("postgres back");
		figures_.postgres_reconnects++;
	}
	pg_down_ = false;
	figures_.postgres_up = true;
	Publish();
	pg_backoff_.Reset();
	next_heartbeat_ = 0;
}

void
RelayLoop::RunRound()
{
	Round round;
	round.now = MonotonicMs();
	// During an outage a round starts by asking Redis itself: a service with nothing to send never
	// asks it, and must not end an outage the next service would still see.
	if (health_.Failing()) {
		try {
			shards_[0]->Ping();
		} catch (const RedisFailure &f) {
			RedisFailed(f, &round);
		}
	}
	LookAtShards(&round);
	if (!round.redis_failed)
		round.services = db_.Services();
	for (const auto &svc : round.services) {
		if (Stopping())
			break; // a stop waits for the pass in progress only: the others are the next start's
		if (!RunService(svc, &round))
			break; // every service needs Redis: the round ends here
	}
	EndRound(round);
	if (Stopping() || (round.more && !round.redis_failed))
		return;
	if (round.redis_failed) {
		Pause(round.delay);
		return;
	}
	WaitForWork(round);
}

// LookAtShards asks each shard out of its backoff whether it is back; round->down[s] while it is not.
void
RelayLoop::LookAtShards(Round *round)
{
	round->down.assign(shards_.size(), false);
	for (size_t s = 1; s < shards_.size(); s++) {
		if (outages_[s].Down() && outages_[s].Due(MonotonicMs())) {
			try {
				shards_[s]->Ping();
				if (outages_[s].Back())
					Log("redis shard " + std::to_string(s) + " back");
				figures_.redis_reconnects++;
			} catch (const RedisFailure &f) {
				ShardFailed(static_cast<int>(s), f.what());
			}
		}
		round->down[s] = outages_[s].Down();
	}
}

bool
RelayLoop::RunService(const Service &svc, Round *round)
{
	ServiceStanding &st = services_[svc.name];
	figures_.relayed[svc.name] += 0; // every service listed, from its first round
	if (!st.Due(round->now))
		return true;
	int64_t reloads = 0;
	for (auto &shard : shards_)
		reloads += shard->ScriptReloads();
	try {
		// what the pass found Redis lost is logged whatever the pass became (it leaves this block)
		struct MarksLog {
			RelayLoop *loop;
			~MarksLog()
			{
				for (const auto &line : loop->db_.TakeMarksLog())
					Log(line);
			}
		} marks_log{this};
		// on a Redis Cluster the service's queues are named in their cluster form (a hash tag each)
		Service on_broker = svc;
		if (cluster_)
			on_broker.queue = ClusterQueueName(svc.queue);
		PassResult r = db_.RunPass(on_broker, cfg_.batch_size, shards_, cfg_.prefix, round->down, &last_layout_[svc.name],
		                           &known_layout_[svc.name], &marks_[svc.name]);
		for (auto &shard : shards_)
			reloads -= shard->ScriptReloads();
		if (reloads != 0)
			Log("redis had lost the batch-add script; loaded it again (SCRIPT FLUSH, or a restart or "
			    "failover behind a proxy that kept the connection open); the batch went again");
		for (const auto &line : r.refusals)
			Log(line);
		if (!r.layout_switched.empty())
			Log(r.layout_switched);
		RecordLayout(svc.name, r);
		if (!r.layout_wait.empty()) {
			st.WaitForLayout(round->now); // the change goes through once the old queues are empty
			return true;
		}
		round->relayed += r.relayed;
		figures_.relayed[svc.name] += static_cast<uint64_t>(r.relayed);
		round->claimed += r.claimed;
		round->more = round->more || MoreToDrain(r.claimed, cfg_.batch_size * kMaxBatches);
		if (st.Worked()) {
			Log("service " + svc.name + " relays again");
			db_.RecordServiceError(svc.name, "");
		}
	} catch (const RedisFailure &f) {
		if (f.kind == RedisFailure::kLayoutChanged) {
			// rolled back, nothing written: no error, no backoff; the next pass, at once, reads the key
			Log("service " + svc.name + ": layout changed: " + f.what() +
			    "; the pass wrote nothing, the next reads the layout key again");
			round->more = true;
			return true;
		}
		if (f.kind == RedisFailure::kMarkChanged) {
			// rolled back, nothing of the call written: the next pass, at once, reads the marks and sends
			// again what Redis lost
			Log("service " + svc.name + ": " + f.what() + "; the pass wrote nothing, the next checks what Redis kept");
			round->more = true;
			return true;
		}
		if (f.kind == RedisFailure::kConnection && f.shard > 0) {
			// rolled back. A shard that just failed: the next pass, at once, leaves its partitions
			// out; one that was down already: this service looks again later (ServiceStanding).
			if (st.ShardFailed(!round->down[f.shard], round->now))
				round->more = true;
			ShardFailed(f.shard, f.what());
			round->down[f.shard] = true;
			return true;
		}
		if (f.kind == RedisFailure::kConnection) {
			RedisFailed(f, round);
			return false;
		}
		ServiceFailed(svc.name, &st, f.what(), round->now);
	} catch (const PgFailure &f) {
		if (f.lost)
			throw;
		if (f.Conflict()) {
			round->more = true; // another relay's pass came first: again at once, from its commit on
			return true;
		}
		ServiceFailed(svc.name, &st, f.what(), round->now);
	} catch (const std::exception &e) {
		ServiceFailed(svc.name, &st, e.what(), round->now); // e.g. a row the batch encoder refuses
	}
	return true;
}

// RecordLayout writes the layout in the status view when it changes (a wait and its job count, a
// switch, the first pass); a wait is logged once, when it starts.
void
RelayLoop::RecordLayout(const std::string &service, const PassResult &r)
{
	std::string layout = r.layout ? std::to_string(r.layout) + " " + r.layout_wait : "";
	if (layout.empty() || layouts_[service] == layout)
		return;
	bool was_waiting = layouts_[service].find("waiting") != std::string::npos;
	if (!r.layout_wait.empty() && !was_waiting)
		Log("service " + service + ": " + r.layout_wait + "; relaying it once they are done");
	db_.RecordLayout(service, r.layout, r.layout_wait);
	layouts_[service] = layout;
}

// ServiceFailed: one service failing is logged once, when it starts, its reason recorded in the
// status view when it changes, and retried with its own backoff (common/relay/service_standing.hpp).
void
RelayLoop::ServiceFailed(const std::string &service, ServiceStanding *standing, const std::string &why, int64_t now)
{
	FailureNews news = standing->Failed(why, now);
	if (news == FailureNews::kStarted)
		Log("service " + service + ": " + why + "; the other services go on");
	if (news != FailureNews::kSame)
		db_.RecordServiceError(service, why);
	last_error_ = why;
}

// ShardFailed: a shard other than shard 0 backs off, logged when its outage starts
// (common/relay/shard_outage.hpp).
void
RelayLoop::ShardFailed(int shard, const std::string &why)
{
	if (outages_[shard].Failed(MonotonicMs()))
		Log("redis shard " + std::to_string(shard) + " unreachable: " + why +
		    "; rows of the partitions on it wait in the outbox, the other shards' partitions are relayed; "
		    "retrying with backoff");
	last_error_ = why;
}

// RedisFailed: Redis (shard 0) failing for every service backs off, logged when the outage starts and
// again when its reason changes (common/relay/relay_health.hpp: the rule the extension's relay follows
// too): an outage that began with a cut connection and lasts for another cause (the certificate the
// server now presents has expired) names that cause in the log.
void
RelayLoop::RedisFailed(const RedisFailure &f, Round *round)
{
	bool log_it = false;
	round->delay = health_.OnFailure(f.what(), &log_it);
	if (log_it)
		Log(std::string("redis unreachable: ") + f.what() + "; rows wait in the outbox, retrying with backoff");
	last_error_ = f.what();
	round->redis_failed = true;
}

// EndRound logs what the round ended (an outage, a sentinel's new master), publishes its figures,
// writes the heartbeat when the state changed or one is due, and runs the purge when due.
void
RelayLoop::EndRound(const Round &round)
{
	// a sentinel shard's newly discovered master, once
	for (size_t s = 0; s < shards_.size(); s++)
		if (std::string notice = shards_[s]->TakeNotice(); !notice.empty())
			Log(shards_.size() > 1 ? "shard " + std::to_string(s) + ": " + notice : notice);
	if (!round.redis_failed) {
		// the round went through: after an outage, "redis back" once the backlog is drained
		bool log_it = false;
		int64_t total = 0;
		health_.OnSuccess(round.relayed, !round.more, &log_it, &total);
		if (log_it)
			Log("redis back, relayed " + std::to_string(total));
	}
	// the figures of this round: Redis shard 0 up unless the round found it failing, the others
	// unless they are in an outage; a shard 0 outage that ended counts as a reconnect
	bool shard0_up = !round.redis_failed && !health_.Failing();
	if (shard0_up && !figures_.redis_up[0])
		figures_.redis_reconnects++;
	figures_.redis_up[0] = shard0_up;
	figures_.redis_durable = shards_[0]->Warning().empty();
	for (size_t s = 1; s < shards_.size(); s++)
		figures_.redis_up[s] = !outages_[s].Down();
	if (!round.redis_failed) {
		figures_.rounds++;
		figures_.last_pass_unix = UnixNow();
	}
	std::string new_state = round.redis_failed || health_.Failing() ? "backing off" : "running";
	figures_.state = Stopping()               ? RelayState::kStopping
	                 : new_state == "running" ? RelayState::kRunning
	                                          : RelayState::kBackingOff;
	Publish();
	if (new_state != state_ || MonotonicMs() >= next_heartbeat_) {
		state_ = new_state;
		Heartbeat();
	}
	if (!round.redis_failed && !Stopping() && MonotonicMs() >= next_purge_) {
		db_.Purge(round.services);
		for (const auto &line : db_.TakeRotationLog())
			Log(line);
		next_purge_ = MonotonicMs() + db_.PurgeEveryMs();
	}
}

// WaitForWork waits for a notification, a logical wake-up or the poll interval (or the next look
// after a stream wake-up that claimed nothing: core/wake_recheck.hpp), writing the heartbeat every
// kHeartbeatEveryMs meanwhile.
void
RelayLoop::WaitForWork(const Round &round)
{
	int64_t look_in = recheck_.AfterPass(woken_by_stream_, round.claimed);
	woken_by_stream_ = false;
	int64_t until = MonotonicMs() + (look_in >= 0 ? look_in : cfg_.poll_interval);
	while (!Stopping() && MonotonicMs() < until) {
		if (logical_ && logical_->Poll(MonotonicMs())) {
			woken_by_stream_ = true;
			break;
		}
		int64_t wake_at = std::min(until, next_heartbeat_);
		if (logical_)
			wake_at = std::min(wake_at, logical_->NextMs());
		int64_t wait = std::max<int64_t>(0, wake_at - MonotonicMs());
		if (db_.WaitForWake(wait, logical_ ? logical_->Socket() : -1))
			break;
		if (MonotonicMs() >= next_heartbeat_)
			Heartbeat();
	}
}

void
RelayLoop::Heartbeat()
{
	RedisLink &redis = *shards_[0]; // its durability warning is the one shown
	db_.Heartbeat(cfg_.relay_id, state_, last_error_, redis.Warning(), redis.Appendfsync(), redacted_);
	next_heartbeat_ = MonotonicMs() + kHeartbeatEveryMs;
}

void
RelayLoop::Publish()
{
	if (metrics_)
		metrics_->Publish(figures_);
}

// Pause waits ms (a Redis backoff) while still answering the logical stream: a walsender left
// unanswered holds up a shutdown of Postgres until wal_sender_timeout. Wake-ups are dropped: the
// next round runs anyway. A Redis Cluster that lost a master serving our slots is asked every
// kClusterRefreshMs meanwhile (RedisLink::Promoted, common/cluster_map_watch.hpp): a map naming a new
// master in its place ends the pause, so the relay follows a failover as soon as the cluster did.
void
RelayLoop::Pause(int64_t ms)
{
	RedisLink &redis = *shards_[0]; // a cluster is the one shard
	int64_t until = MonotonicMs() + ms;
	while (!Stopping() && MonotonicMs() < until) {
		int64_t step = redis.AwaitingPromotion() ? std::min(until, MonotonicMs() + kClusterRefreshMs) : until;
		if (!logical_ || !db_.Connected()) {
			Sleep(step - MonotonicMs());
		} else {
			logical_->Poll(MonotonicMs());
			int64_t wait = std::max<int64_t>(0, std::min(step, logical_->NextMs()) - MonotonicMs());
			db_.WaitForWake(wait, logical_->Socket());
		}
		if (redis.AwaitingPromotion() && redis.Promoted())
			return;
	}
}

// Sleep waits ms, or less when a stop is requested.
void
RelayLoop::Sleep(int64_t ms)
{
	int64_t until = MonotonicMs() + ms;
	while (!Stopping() && MonotonicMs() < until)
		std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(50, until - MonotonicMs())));
}

} // namespace chat_outbox::relay
