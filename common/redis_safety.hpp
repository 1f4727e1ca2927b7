// common/redis_safety.hpp - is this Redis safe to keep messages in?
//
// The write-up's last conclusion: once in Redis, a message is only as safe as Redis. Jobs waiting
// in a Redis without AOF are lost when it restarts, an evicting Redis may drop them, and with
// `appendfsync no` an OS crash loses what the kernel had not written yet. The relay and the daemon
// both ask Redis (CONFIG GET appendonly / appendfsync / maxmemory-policy) and warn with this text.
#pragma once

#include <string>

namespace chat_outbox {

// What CONFIG GET answered; "" means "could not read" (e.g. CONFIG is denied by ACL).
struct RedisDurability {
	std::string appendonly;
	std::string appendfsync;
	std::string maxmemory_policy;
};

// RedisSafetyWarning returns "" when Redis keeps jobs across a restart, never evicts them and
// fsyncs its AOF at least every second, else a sentence saying what is wrong. Unread values give
// no warning.
std::string RedisSafetyWarning(const RedisDurability &d);
std::string RedisSafetyWarning(const std::string &appendonly, const std::string &maxmemory_policy);

} // namespace chat_outbox
