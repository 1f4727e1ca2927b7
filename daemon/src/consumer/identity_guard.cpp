// daemon/src/consumer/identity_guard.cpp - see identity_guard.hpp.
#include "consumer/identity_guard.hpp"

#include "consumer/core/bullmq_identity.hpp"

namespace chat_outboxd {

void
CheckIdentity(RedisCommands &cmd, const std::string &connection_name,
              std::function<void(IdentityCheck, int64_t)> done)
{
	cmd.Command({"CLIENT", "LIST", "TYPE", "normal"},
	            [&cmd, connection_name, done = std::move(done)](const RedisValue *r, const std::string &err) {
		if (!r || r->IsError()) {
			Log(Level::Warning, "identity check failed: %s", r ? r->str.c_str() : err.c_str());
			done(IdentityCheck::Unknown, 0);
			return;
		}
		int64_t other = 0;
		bool clash = IdentityClash(ParseClientList(r->str), connection_name, cmd.ClientId(), &other);
		done(clash ? IdentityCheck::Clash : IdentityCheck::Ok, other);
	});
}

} // namespace chat_outboxd
