// common/process/listen_address.cpp - see listen_address.hpp.
#include "common/process/listen_address.hpp"

namespace chat_outbox {

bool
ParseListenAddress(const std::string &listen, std::string *host, int *port)
{
	size_t colon = listen.rfind(':');
	if (colon == std::string::npos)
		return false;
	*host = listen.substr(0, colon);
	if (host->size() >= 2 && host->front() == '[' && host->back() == ']')
		*host = host->substr(1, host->size() - 2);
	std::string p = listen.substr(colon + 1);
	if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos)
		return false;
	*port = std::stoi(p);
	return *port > 0 && *port < 65536;
}

bool
AnyInterface(const std::string &host)
{
	return host.empty() || host == "0.0.0.0" || host == "*";
}

} // namespace chat_outbox
