// common/redis_safety.hpp - is this Redis safe to keep messages in?
//
// The write-up's last conclusion: once in Redis, a message is only as safe as Redis. Jobs waiting
// in a Redis without AOF are lost when it restarts, and an evicting Redis may drop them. The relay
// and the daemon both ask Redis (CONFIG GET appendonly / maxmemory-policy) and warn with this text.
#pragma once

#include <string>

namespace chat_outbox {

// RedisSafetyWarning returns "" when Redis keeps jobs across a restart and never evicts them, else
// a sentence saying what is wrong. Empty inputs mean "could not read" (e.g. CONFIG is denied by
// ACL) and give no warning.
std::string RedisSafetyWarning(const std::string &appendonly, const std::string &maxmemory_policy);

} // namespace chat_outbox
