// relay/src/main.cpp - chat-outbox-relay: the relay as a process, for a managed install
// (sql/managed/chat_outbox_managed.sql) on a Postgres that cannot load our library.
//
// Round after round: every service's pass (outbox_db.cpp), then wait for a notification on the
// outbox triggers' channel, a wake-up from the logical replication stream (--wake logical,
// wake_logical.cpp) or the poll interval, whichever comes first. A full pass goes again at
// once. Redis failing for everyone backs off (50 ms doubling to 1 s) and is logged once when it
// starts and once when it ends; one service failing (a dropped table, a queue Redis refuses) is
// recorded in the status view, logged once per change, retried with its own backoff, and the
// others go on. Postgres lost: reconnect with the same backoff. SIGTERM or SIGINT: finish the
// pass in progress, then exit 0. Nothing is kept in memory across transactions; any number of
// relays may run at once (their passes take turns on each service, in id order). With --metrics-listen, the
// loop publishes its figures to the /metrics thread (metrics_server.hpp) as they change.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/relay_config.hpp"
#include "core/relay_metrics.hpp"
#include "common/relay/relay_health.hpp"
#include "core/wake_recheck.hpp"
#include "outbox_db.hpp"
#include "common/partitions.hpp"
#include "metrics_server.hpp"
#include "redis_link.hpp"
#include "wake_logical.hpp"

namespace {

volatile std::sig_atomic_t stop_requested = 0;

void
OnStop(int)
{
	stop_requested = 1;
}

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
NowMs()
{
	using namespace std::chrono;
	return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// Sleep waits ms, or less when a stop is requested.
void
Sleep(int64_t ms)
{
	int64_t until = NowMs() + ms;
	while (!stop_requested && NowMs() < until)
		std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(50, until - NowMs())));
}

// A shard other than shard 0 that failed: its partitions wait, the others go on. Shard 0 holds the
// layout keys, so its failure is every service's (RelayHealth), as with a single Redis.
struct ShardOutage {
	int64_t failures = 0; // in a row; 0 = up
	int64_t until = 0;    // not tried again before
};

struct ServiceState {
	std::string error; // the failure recorded in the status view, "" while it relays
	int64_t failures = 0;
	int64_t retry_at = 0;
};

} // namespace

int
main(int argc, char **argv)
{
	using namespace chat_outbox;
	using namespace chat_outbox::relay;

	std::vector<std::string> args(argv + 1, argv + argc), env;
	for (char **e = environ; *e; e++)
		env.emplace_back(*e);
	RelayConfig cfg;
	bool help = false;
	std::string error;
	if (!ParseRelayConfig(args, env, &cfg, &help, &error)) {
		std::fprintf(stderr, "chat-outbox-relay: %s\n%s", error.c_str(), Usage().c_str());
		return 2;
	}
	if (help) {
		std::fputs(Usage().c_str(), stdout);
		return 0;
	}
	auto urls = ParseShardList(cfg.redis_url, &error);
	if (!urls) {
		std::fprintf(stderr, "chat-outbox-relay: --redis-url: %s\n", error.c_str());
		return 2;
	}
	if (cfg.prefix.empty() || cfg.prefix.find(':') != std::string::npos) {
		std::fprintf(stderr, "chat-outbox-relay: --prefix must be non-empty and contain no ':'\n");
		return 2;
	}
	if (cfg.relay_id.empty()) {
		char host[256] = "";
		gethostname(host, sizeof host - 1);
		cfg.relay_id = std::string(host) + ":" + std::to_string(getpid());
	}
	struct sigaction sa = {};
	sa.sa_handler = OnStop; // no SA_RESTART: a wait returns at once
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGINT, &sa, nullptr);
	signal(SIGPIPE, SIG_IGN);

	std::unique_ptr<MetricsServer> metrics;
	if (cfg.metrics_listen != "off") {
		metrics = std::make_unique<MetricsServer>(cfg.database_url);
		if (!metrics->Start(cfg.metrics_listen, &error)) {
			std::fprintf(stderr, "chat-outbox-relay: --metrics-listen: %s\n", error.c_str());
			return 2;
		}
	}
	RelayFigures figures; // what /metrics shows; published after each change
	figures.redis_up.assign(urls->size(), true);
	auto publish = [&] {
		if (metrics)
			metrics->Publish(figures);
	};
	publish();

	OutboxDb db(cfg.database_url);
	RedisShards shards;
	std::vector<std::string> redacted;
	for (const auto &url : *urls) {
		shards.push_back(std::make_unique<RedisLink>(url, cfg.redis_timeout, cfg.prefix, cfg.redis_min_replicas));
		redacted.push_back(url.Redacted());
	}
	RedisLink &redis = *shards[0]; // its durability warning is the one shown
	RelayHealth health;      // Redis, for every service
	Backoff pg_backoff(kServerRetryFirstMs, kServerRetryMaxMs);
	bool pg_down = false;
	std::map<std::string, ServiceState> services;
	std::map<std::string, std::string> layouts; // per service: what its layout was last recorded as
	std::map<std::string, int> last_layout;     // per service: the count its last pass relayed under
	std::map<std::string, KnownLayout> known_layout; // per service: the layout key's value that count was chosen by
	std::vector<ShardOutage> outages(shards.size());
	std::string last_error, state = "starting";
	chat_outbox::relay::WakeRecheck recheck; // after a stream wake-up that claimed nothing
	bool woken_by_stream = false;            // the coming round follows a stream wake-up
	int64_t next_heartbeat = 0, next_purge = 0;
	std::unique_ptr<LogicalWake> logical;
	if (cfg.wake == "logical")
		logical = std::make_unique<LogicalWake>(cfg.database_url, Log);
	// pause waits ms (a Redis backoff) while still answering the logical stream: a walsender left
	// unanswered holds up a shutdown of Postgres until wal_sender_timeout. Wake-ups are dropped: the
	// next round runs anyway.
	auto pause = [&](int64_t ms) {
		int64_t until = NowMs() + ms;
		while (!stop_requested && NowMs() < until) {
			if (!logical || !db.Connected()) {
				Sleep(until - NowMs());
				return;
			}
			logical->Poll(NowMs());
			int64_t wait = std::max<int64_t>(0, std::min(until, logical->NextMs()) - NowMs());
			db.WaitForWake(wait, logical->Socket());
		}
	};
	Log("relaying to " + RedactedShardList(*urls) + " (prefix " + cfg.prefix + "), relay id " + cfg.relay_id +
	    ", woken by " + (logical ? "NOTIFY and logical decoding" : "NOTIFY") +
	    (metrics ? ", /metrics on " + cfg.metrics_listen : std::string()));

	while (!stop_requested) {
		try {
			if (!db.Connected()) {
				db.Connect();
				if (pg_down) {
					Log("postgres back");
					figures.postgres_reconnects++;
				}
				pg_down = false;
				figures.postgres_up = true;
				publish();
				pg_backoff.Reset();
				next_heartbeat = 0;
			}
			int64_t now = NowMs();
			bool more = false, redis_failed = false;
			int64_t delay = 0;
			// one service failing: recorded and logged once per change, retried with its own backoff
			auto service_failed = [&](const std::string &name, ServiceState *st, const std::string &why) {
				if (st->error != why) {
					Log("service " + name + ": " + why + "; the other services go on");
					db.RecordServiceError(name, why);
				}
				st->error = why;
				st->retry_at = now + Backoff(kServerRetryFirstMs, kServerRetryMaxMs).Delay(st->failures++);
				last_error = why;
			};
			// Redis failing for every service: backoff, logged when the outage starts
			auto redis_failed_with = [&](const RedisFailure &f) {
				bool log_it = false;
				delay = health.OnFailure(&log_it);
				if (log_it)
					Log(std::string("redis unreachable: ") + f.what() + "; rows wait in the outbox, retrying with backoff");
				last_error = f.what();
				redis_failed = true;
			};
			// During an outage a round starts by asking Redis itself: a service with nothing to send
			// never asks it, and must not end an outage the next service would still see.
			if (health.Failing()) {
				try {
					shards[0]->Ping();
				} catch (const RedisFailure &f) {
					redis_failed_with(f);
				}
			}
			// a shard out of its backoff is asked whether it is back; down[s] while it is not
			std::vector<bool> down(shards.size(), false);
			auto shard_failed = [&](int s, const std::string &why) {
				if (outages[s].failures == 0)
					Log("redis shard " + std::to_string(s) + " unreachable: " + why +
						"; rows of the partitions on it wait in the outbox, the other shards' partitions are relayed; "
						"retrying with backoff");
				outages[s].until = NowMs() + Backoff(kServerRetryFirstMs, kServerRetryMaxMs).Delay(outages[s].failures++);
				last_error = why;
			};
			for (size_t s = 1; s < shards.size(); s++) {
				if (outages[s].failures > 0 && NowMs() >= outages[s].until) {
					try {
						shards[s]->Ping();
						Log("redis shard " + std::to_string(s) + " back");
						outages[s] = ShardOutage{};
						figures.redis_reconnects++;
					} catch (const RedisFailure &f) {
						shard_failed(static_cast<int>(s), f.what());
					}
				}
				down[s] = outages[s].failures > 0;
			}
			int64_t relayed = 0, claimed = 0;
			auto list = redis_failed ? std::vector<Service>{} : db.Services();
			for (const auto &svc : list) {
				if (stop_requested)
					break; // a SIGTERM waits for the pass in progress only: the others are the next start's
				ServiceState &st = services[svc.name];
				figures.relayed[svc.name] += 0; // every service listed, from its first round
				if (st.retry_at > now)
					continue;
				int64_t reloads = 0;
				for (auto &shard : shards)
					reloads += shard->ScriptReloads();
				try {
					PassResult r = db.RunPass(svc, cfg.batch_size, shards, cfg.prefix, down, &last_layout[svc.name],
											  &known_layout[svc.name]);
					for (auto &shard : shards)
						reloads -= shard->ScriptReloads();
					if (reloads != 0)
						Log("redis had lost the batch-add script; loaded it again (SCRIPT FLUSH, or a restart or "
							"failover behind a proxy that kept the connection open); the batch went again");
					for (const auto &line : r.refusals)
						Log(line);
					if (!r.layout_switched.empty())
						Log(r.layout_switched);
					// the layout in the status view, written when it changes (a wait and its job count, a
					// switch, the first pass); a wait is logged once, when it starts
					std::string layout = r.layout ? std::to_string(r.layout) + " " + r.layout_wait : "";
					if (!layout.empty() && layouts[svc.name] != layout) {
						bool was_waiting = layouts[svc.name].find("waiting") != std::string::npos;
						if (!r.layout_wait.empty() && !was_waiting)
							Log("service " + svc.name + ": " + r.layout_wait + "; relaying it once they are done");
						db.RecordLayout(svc.name, r.layout, r.layout_wait);
						layouts[svc.name] = layout;
					}
					if (!r.layout_wait.empty()) {
						st.retry_at = now + 200; // looked at again soon: the change goes through once the old queues are empty
						continue;
					}
					relayed += r.relayed;
					figures.relayed[svc.name] += static_cast<uint64_t>(r.relayed);
					claimed += r.claimed;
					more = more || MoreToDrain(r.claimed, cfg.batch_size * kMaxBatches);
					if (!st.error.empty()) {
						Log("service " + svc.name + " relays again");
						db.RecordServiceError(svc.name, "");
					}
					st = ServiceState{};
				} catch (const RedisFailure &f) {
					if (f.kind == RedisFailure::kLayoutChanged) {
						// rolled back, nothing written: no error, no backoff; the next pass, at once, reads the key
						Log("service " + svc.name + ": layout changed: " + f.what() + "; the pass wrote nothing, the next reads the layout key again");
						more = true;
						continue;
					}
					if (f.kind == RedisFailure::kConnection && f.shard > 0) {
						// rolled back. A shard that just failed: the next pass, at once, leaves its
						// partitions out. One that was down already (a change of the count needs every
						// shard of the old layout): this service looks again a little later.
						if (down[f.shard])
							st.retry_at = now + 200;
						else
							more = true;
						shard_failed(f.shard, f.what());
						down[f.shard] = true;
						continue;
					}
					if (f.kind == RedisFailure::kConnection) {
						redis_failed_with(f);
						break; // every service needs Redis: the round ends here
					}
					service_failed(svc.name, &st, f.what());
				} catch (const PgFailure &f) {
					if (f.lost)
						throw;
					if (f.Conflict()) {
						more = true; // another relay's pass came first: again at once, from its commit on
						continue;
					}
					service_failed(svc.name, &st, f.what());
				} catch (const std::exception &e) {
					service_failed(svc.name, &st, e.what()); // e.g. a row the batch encoder refuses
				}
			}
			// a sentinel shard's newly discovered master, once
			for (size_t s = 0; s < shards.size(); s++)
				if (std::string notice = shards[s]->TakeNotice(); !notice.empty())
					Log(shards.size() > 1 ? "shard " + std::to_string(s) + ": " + notice : notice);
			if (!redis_failed) {
				// the round went through: after an outage, "redis back" once the backlog is drained
				bool log_it = false;
				int64_t total = 0;
				health.OnSuccess(relayed, !more, &log_it, &total);
				if (log_it)
					Log("redis back, relayed " + std::to_string(total));
			}
			// the figures of this round: Redis shard 0 up unless the round found it failing, the others
			// unless they are in an outage; a shard 0 outage that ended counts as a reconnect
			bool shard0_up = !redis_failed && !health.Failing();
			if (shard0_up && !figures.redis_up[0])
				figures.redis_reconnects++;
			figures.redis_up[0] = shard0_up;
			figures.redis_durable = redis.Warning().empty();
			for (size_t s = 1; s < shards.size(); s++)
				figures.redis_up[s] = outages[s].failures == 0;
			if (!redis_failed) {
				figures.rounds++;
				figures.last_pass_unix = UnixNow();
			}
			std::string new_state = redis_failed || health.Failing() ? "backing off" : "running";
			figures.state = stop_requested ? RelayState::kStopping
			                : new_state == "running" ? RelayState::kRunning : RelayState::kBackingOff;
			publish();
			if (new_state != state || NowMs() >= next_heartbeat) {
				state = new_state;
				db.Heartbeat(cfg.relay_id, state, last_error, redis.Warning(), redis.Appendfsync(), redacted);
				next_heartbeat = NowMs() + 1000;
			}
			if (!redis_failed && !stop_requested && NowMs() >= next_purge) {
				db.Purge(list);
				for (const auto &line : db.TakeRotationLog())
					Log(line);
				next_purge = NowMs() + db.PurgeEveryMs();
			}
			if (stop_requested || (more && !redis_failed))
				continue;
			if (redis_failed) {
				pause(delay);
				continue;
			}
			// wait for a notification, a logical wake-up or the poll interval (or the next look after a
			// stream wake-up that claimed nothing: core/wake_recheck.hpp), writing the heartbeat every
			// second meanwhile
			int64_t look_in = recheck.AfterPass(woken_by_stream, claimed);
			woken_by_stream = false;
			int64_t until = NowMs() + (look_in >= 0 ? look_in : cfg.poll_interval);
			while (!stop_requested && NowMs() < until) {
				if (logical && logical->Poll(NowMs())) {
					woken_by_stream = true;
					break;
				}
				int64_t wake_at = std::min(until, next_heartbeat);
				if (logical)
					wake_at = std::min(wake_at, logical->NextMs());
				int64_t wait = std::max<int64_t>(0, wake_at - NowMs());
				if (db.WaitForWake(wait, logical ? logical->Socket() : -1))
					break;
				if (NowMs() >= next_heartbeat) {
					db.Heartbeat(cfg.relay_id, state, last_error, redis.Warning(), redis.Appendfsync(), redacted);
					next_heartbeat = NowMs() + 1000;
				}
			}
		} catch (const PgFailure &f) {
			if (!pg_down)
				Log(std::string("postgres unreachable: ") + f.what() + "; retrying with backoff");
			pg_down = true;
			figures.postgres_up = false;
			figures.state = RelayState::kPostgresDown;
			publish();
			db.Disconnect();
			if (logical)
				logical->Drop();
			Sleep(pg_backoff.Next());
		}
	}
	figures.state = RelayState::kStopping;
	publish();
	Log("stopping");
	return 0;
}
