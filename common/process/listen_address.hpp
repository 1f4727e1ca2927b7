// common/process/listen_address.hpp - a listen setting as host and port: chat-outboxd's --listen and
// --metrics-listen, chat-outbox-relay's --metrics-listen.
#pragma once

#include <string>

namespace chat_outbox {

// ParseListenAddress reads "host:port": an IPv6 host loses its brackets ("[::1]:8080"), the port is
// 1 to 65535 in digits only. False on anything else.
bool ParseListenAddress(const std::string &listen, std::string *host, int *port);

// AnyInterface: the host means every interface ("", "0.0.0.0" or "*").
bool AnyInterface(const std::string &host);

} // namespace chat_outbox
