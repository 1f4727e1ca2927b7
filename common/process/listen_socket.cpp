// common/process/listen_socket.cpp - see listen_socket.hpp.
#include "common/process/listen_socket.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/process/listen_address.hpp"

namespace chat_outbox {

int
OpenListenSocket(const std::string &listen, std::string *error, int backlog)
{
	std::string host;
	int port = 0;
	if (!ParseListenAddress(listen, &host, &port)) {
		*error = "cannot listen on " + listen + ": not host:port";
		return -1;
	}
	addrinfo hints = {};
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	addrinfo *res = nullptr;
	std::string service = std::to_string(port);
	int rc = getaddrinfo(AnyInterface(host) ? nullptr : host.c_str(), service.c_str(), &hints, &res);
	if (rc != 0) {
		*error = "cannot listen on " + listen + ": " + gai_strerror(rc);
		return -1;
	}
	int listen_fd = -1;
	std::string why = "no address";
	for (addrinfo *a = res; a && listen_fd < 0; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			why = std::strerror(errno);
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, backlog) == 0) {
			listen_fd = fd;
			break;
		}
		why = std::strerror(errno);
		close(fd);
	}
	freeaddrinfo(res);
	if (listen_fd < 0)
		*error = "cannot listen on " + listen + ": " + why;
	return listen_fd;
}

} // namespace chat_outbox
