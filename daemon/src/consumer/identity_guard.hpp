// daemon/src/consumer/identity_guard.hpp - refuses a second daemon with the same identity.
//
// The command connection is named chat-outboxd:<prefix>:<queue>:<identity> during its handshake;
// CLIENT LIST then shows whether another live connection carries that name. The one that came
// second (higher client id) must not run: it would take back, as "left by a dead predecessor",
// jobs the first one is still working on. A SIGKILLed predecessor is not listed: the kernel closed
// its sockets.
#pragma once

#include <functional>
#include <string>

#include "net/redis_commands.hpp"

namespace chat_outboxd {

enum class IdentityCheck { Ok,
	                       Clash,
	                       Unknown };

// CheckIdentity answers with Clash (and the other client's id) or Ok; Unknown when Redis failed.
void CheckIdentity(RedisCommands &cmd, const std::string &connection_name,
                   std::function<void(IdentityCheck result, int64_t other_id)> done);

} // namespace chat_outboxd
