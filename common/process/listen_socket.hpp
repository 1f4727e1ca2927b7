// common/process/listen_socket.hpp - open a listening TCP socket for a host:port setting, or say exactly why not:
// chat-outbox-relay's --metrics-listen and chat-outboxd's --listen and --metrics-listen listen on it.
#pragma once

#include <string>

namespace chat_outbox {

// OpenListenSocket: a socket bound to host:port (common/process/listen_address.hpp; every interface for
// AnyInterface(host)), listening with this backlog, close-on-exec, SO_REUSEADDR. -1 with *error = "cannot
// listen on <listen>: <reason>" (address in use, not an address of this machine, a name that does not
// resolve, not host:port).
int OpenListenSocket(const std::string &listen, std::string *error, int backlog = 16);

} // namespace chat_outbox
