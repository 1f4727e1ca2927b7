// common/redis_handshake.cpp - see redis_handshake.hpp.
#include "redis_handshake.hpp"

namespace chat_outbox {

std::vector<std::vector<std::string>>
HandshakeCommands(const RedisUrl &url)
{
	std::vector<std::vector<std::string>> cmds;
	if (!url.password.empty()) {
		if (url.username.empty())
			cmds.push_back({"AUTH", url.password});
		else
			cmds.push_back({"AUTH", url.username, url.password});
	}
	if (url.db != 0)
		cmds.push_back({"SELECT", std::to_string(url.db)});
	return cmds;
}

} // namespace chat_outbox
