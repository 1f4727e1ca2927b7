// daemon/src/gateway/core/listen_address.hpp - the gateway's listen settings (--listen,
// --metrics-listen) as host and port.
#pragma once

#include <string>

namespace chat_outboxd {

// ParseListenAddress reads "host:port": an IPv6 host loses its brackets ("[::1]:8080"), the port is
// 1 to 65535 in digits only. False on anything else.
bool ParseListenAddress(const std::string &listen, std::string *host, int *port);

// AnyInterface: the host means every interface ("", "0.0.0.0" or "*").
bool AnyInterface(const std::string &host);

} // namespace chat_outboxd
