// relay/src/relay_loop.hpp - chat-outbox-relay's rounds, from the first connect to a stop.
//
// Round after round: every service's pass (outbox_db.cpp), then wait for a notification on the
// outbox triggers' channel, a wake-up from the logical replication stream (--wake logical,
// wake_logical.cpp) or the poll interval, whichever comes first. A full pass goes again at once.
// What a failure means for the round is decided in common/relay/, as the in-database relay
// (extension/src/pg/relay_worker.cpp) decides it: Redis failing for everyone (relay_health.hpp), one
// service failing or waiting (service_standing.hpp: the others go on), a shard other than shard 0
// down (shard_outage.hpp: its partitions wait, the others go on). This class logs, records and
// waits as they say. Postgres lost: reconnect with the same backoff (common/backoff.hpp), logged once
// each way. A stop request: finish the pass in progress, then return. Nothing is kept in memory
// across transactions; any number of relays may run at once (their passes take turns on each
// service, in id order). With a MetricsServer, the figures are published to it as they change.
#pragma once

#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/backoff.hpp"
#include "common/redis_url.hpp"
#include "common/relay/relay_health.hpp"
#include "common/relay/service_standing.hpp"
#include "common/relay/shard_outage.hpp"
#include "core/relay_config.hpp"
#include "core/relay_metrics.hpp"
#include "core/wake_recheck.hpp"
#include "metrics_server.hpp"
#include "outbox_db.hpp"
#include "common/relay/redis_link.hpp"
#include "wake_logical.hpp"

namespace chat_outbox::relay {

// kHeartbeatEveryMs: this relay's row of chat_outbox.relays is written at least this often.
inline constexpr int64_t kHeartbeatEveryMs = 1000;

class RelayLoop {
  public:
	// urls: --redis-url's shards, shard 0 first; metrics: the /metrics thread, or null; stop: set by
	// the signal handler, read between steps.
	RelayLoop(const RelayConfig &cfg, const std::vector<RedisUrl> &urls, MetricsServer *metrics,
	          const volatile std::sig_atomic_t *stop);

	// Run relays until a stop is requested.
	void Run();

  private:
	// One round's findings.
	struct Round {
		int64_t now = 0;           // when it started (steady ms)
		bool more = false;         // a pass came back full, or must go again at once
		bool redis_failed = false; // shard 0 failed: every service waits
		int64_t delay = 0;         // then: the backoff before the next round
		int64_t relayed = 0, claimed = 0;
		std::vector<bool> down; // per shard: down for this round
		std::vector<Service> services;
	};

	void Connect();
	void RunRound();
	void LookAtShards(Round *round);
	// RunService runs one service's pass; false when Redis failed for everyone (the round ends).
	bool RunService(const Service &svc, Round *round);
	void RecordLayout(const std::string &service, const PassResult &r);
	void ServiceFailed(const std::string &service, ServiceStanding *standing, const std::string &why, int64_t now);
	void ShardFailed(int shard, const std::string &why);
	void RedisFailed(const RedisFailure &f, Round *round);
	void EndRound(const Round &round);
	void WaitForWork(const Round &round);
	void Heartbeat();
	void Publish();
	void Pause(int64_t ms);
	void Sleep(int64_t ms);
	bool Stopping() const { return *stop_ != 0; }

	const RelayConfig &cfg_;
	MetricsServer *metrics_;
	const volatile std::sig_atomic_t *stop_;
	RelayFigures figures_; // what /metrics shows; published after each change
	OutboxDb db_;
	RedisShards shards_;
	std::vector<std::string> redacted_; // the shards' URLs without passwords, for the heartbeat
	bool cluster_ = false;              // a redis-cluster:// URL: the services' queues in their cluster form
	std::string shard_list_;            // the same, for the first log line
	std::unique_ptr<LogicalWake> logical_;
	RelayHealth health_; // Redis (shard 0), for every service
	Backoff pg_backoff_{kServerRetryFirstMs, kPostgresRetryMaxMs};
	bool pg_down_ = false;
	std::map<std::string, ServiceStanding> services_;
	std::map<std::string, std::string> layouts_;      // per service: what its layout was last recorded as
	std::map<std::string, int> last_layout_;          // per service: the count its last pass relayed under
	std::map<std::string, KnownLayout> known_layout_; // per service: the layout key's value that count was chosen by
	std::map<std::string, MarkWatch> marks_;          // per service: when it read its marks in Redis
	std::vector<ShardOutage> outages_;                // per shard; shard 0's is health_
	std::string last_error_, state_ = "starting";
	WakeRecheck recheck_;          // after a stream wake-up that claimed nothing
	bool woken_by_stream_ = false; // the coming round follows a stream wake-up
	int64_t next_heartbeat_ = 0, next_purge_ = 0;
};

} // namespace chat_outbox::relay
