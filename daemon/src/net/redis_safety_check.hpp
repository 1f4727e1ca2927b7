// daemon/src/net/redis_safety_check.hpp - warn when the Redis we consume from can lose jobs.
//
// After every (re)connect it reads appendonly and maxmemory-policy and logs a warning when Redis
// would lose waiting jobs on restart or evict them; it logs again only when the answer changes
// (a Redis restarted with a different configuration). The result is the redis_durable gauge.
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
	RedisConn &conn_;
	Metrics &metrics_;
	std::string last_warning_;
	bool checked_ = false;
};

} // namespace chat_outboxd
