// common/redis_handshake.cpp - see redis_handshake.hpp.
#include "common/redis_handshake.hpp"

namespace chat_outbox {

std::vector<std::string>
AuthCommand(const std::string &user, const std::string &password)
{
	if (user.empty())
		return {"AUTH", password};
	return {"AUTH", user, password};
}

std::vector<std::vector<std::string>>
HandshakeCommands(const RedisUrl &url)
{
	std::vector<std::vector<std::string>> cmds;
	if (!url.password.empty())
		cmds.push_back(AuthCommand(url.username, url.password));
	if (url.db != 0)
		cmds.push_back({"SELECT", std::to_string(url.db)});
	return cmds;
}

} // namespace chat_outbox
