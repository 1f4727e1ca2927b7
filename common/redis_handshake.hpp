// common/redis_handshake.hpp - what a new Redis connection sends before anything else, shared by
// the relay and the daemon.
#pragma once

#include <string>
#include <vector>

#include "common/redis_url.hpp"

namespace chat_outbox {

// HandshakeCommands are the commands, in order, that make a new connection to url usable: AUTH
// when the URL has a password (AUTH <user> <password> with an ACL user, AUTH <password> for the
// default user), then SELECT <db> unless db is 0. An error reply to any of them means the
// connection is unusable (wrong password, NOPERM, no such db): the client drops it and retries
// with backoff. Each client appends its own commands after these (CLIENT SETNAME, SCRIPT LOAD...).
std::vector<std::vector<std::string>> HandshakeCommands(const RedisUrl &url);

// AuthCommand: AUTH <user> <password> with an ACL user, AUTH <password> for the default user.
std::vector<std::string> AuthCommand(const std::string &user, const std::string &password);

} // namespace chat_outbox
