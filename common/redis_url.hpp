// common/redis_url.hpp - parse redis:// URLs, shared by the relay and the daemon.
//
// Pure C++: no Postgres headers, no I/O, so it is unit-tested without servers.
#pragma once

#include <optional>
#include <string>

namespace chat_outbox {

struct RedisUrl {
	std::string host = "127.0.0.1";
	int port = 6379;
	std::string username; // empty: AUTH <password> (Redis < 6 style / default user)
	std::string password; // empty: no AUTH
	int db = 0;
	std::string unix_socket; // set for redis+unix:///path or unix:///path

	// Redacted form for logs: the password never reaches a log line.
	std::string Redacted() const;
};

// ParseRedisUrl accepts redis://[[user]:password@]host[:port][/db] (percent-encoded user and
// password, IPv6 in brackets) and unix:///path/to.sock[?db=N]. Returns nullopt and sets *error
// when the URL is malformed, so callers can report the reason instead of guessing.
std::optional<RedisUrl> ParseRedisUrl(const std::string &url, std::string *error);

} // namespace chat_outbox
