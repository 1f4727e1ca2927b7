// daemon/src/net/redis_safety_check.hpp - warn when a Redis we consume from can lose jobs, and
// report how much its AOF can lose.
//
// One check per shard the daemon uses: shard 0 through the gateway's connection (every daemon
// uses it for the bus), the others through the consumer's per-shard connections. After every
// (re)connect a check reads appendonly, maxmemory-policy and appendfsync (three CONFIG GETs,
// pipelined). It logs a warning when that Redis would lose waiting jobs on restart or evict them,
// again only when the answer changes (a Redis restarted with a different configuration), naming
// the shard when there are several. Metrics::redis_durable is false while any shard is not durable;
// Metrics::redis_appendfsync is shard 0's (as the relay's chat_outbox.status shows it), for
// /healthz and /metrics.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "metrics/core/daemon_metrics.hpp"
#include "net/redis_commands.hpp"

namespace chat_outboxd {

class RedisSafetyChecks {
  public:
	// nshards: how many shards the --redis-url list has (names the shards in the log when > 1).
	RedisSafetyChecks(Metrics &metrics, size_t nshards);

	// Watch checks shard's Redis through conn after each of its connects. conn outlives this.
	void Watch(RedisCommands &conn, size_t shard);

  private:
	enum class Verdict { Unchecked,
		                 Durable,
		                 NotDurable };
	struct Check {
		RedisCommands *conn;
		size_t shard;
		Verdict verdict = Verdict::Unchecked;
		std::string last_warning;
	};
	void Run(Check &check);
	void Judge(Check &check, const std::string &appendonly, const std::string &maxmemory_policy,
	           const std::string &appendfsync);
	Metrics &metrics_;
	size_t nshards_;
	std::vector<std::unique_ptr<Check>> checks_;
};

} // namespace chat_outboxd
