// daemon/src/net/redis_safety_check.hpp - warn when the Redis we consume from can lose jobs, and
// report how much its AOF can lose.
//
// After every (re)connect it reads appendonly, maxmemory-policy and appendfsync (three CONFIG GETs,
// pipelined). It logs a warning when Redis would lose waiting jobs on restart or evict them, again
// only when the answer changes (a Redis restarted with a different configuration): the
// redis_durable gauge. appendfsync goes to Metrics::redis_appendfsync for /healthz and /metrics.
#pragma once

#include <string>

#include "base/core/metrics.hpp"
#include "net/redis_conn.hpp"

namespace chat_outboxd {

class RedisSafetyCheck {
  public:
	RedisSafetyCheck(RedisConn &conn, Metrics &metrics);

  private:
	void Run();
	void Judge(const std::string &appendonly, const std::string &maxmemory_policy, const std::string &appendfsync);
	RedisConn &conn_;
	Metrics &metrics_;
	std::string last_warning_;
	bool checked_ = false;
};

} // namespace chat_outboxd
