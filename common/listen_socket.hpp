// common/listen_socket.hpp - open a listening TCP socket for a host:port setting, or say exactly why not:
// chat-outbox-relay's --metrics-listen listens on it; chat-outboxd opens and closes one for --listen and
// --metrics-listen before libwebsockets binds them, because libwebsockets, given an address that is not on
// this machine or a name, creates the listener anyway and retries in the background: the daemon would run
// on without it and say nothing.
#pragma once

#include <string>

namespace chat_outbox {

// OpenListenSocket: a socket bound to host:port (common/listen_address.hpp; every interface for
// AnyInterface(host)), listening, close-on-exec, SO_REUSEADDR. -1 with *error = "cannot listen on
// <listen>: <reason>" (address in use, not an address of this machine, a name that does not resolve,
// not host:port). *bound_host, when given: the numeric address bound ("" for every interface), what a
// library that takes only addresses is given instead of a name.
int OpenListenSocket(const std::string &listen, std::string *error, std::string *bound_host = nullptr);

} // namespace chat_outbox
