// common/redis_url.cpp - redis:// URL parsing (see redis_url.hpp).
#include "common/redis_url.hpp"

#include <cctype>
#include <cstdlib>

namespace chat_outbox {

namespace {

bool
PercentDecode(const std::string &in, std::string *out)
{
	out->clear();
	for (size_t i = 0; i < in.size(); i++) {
		if (in[i] != '%') {
			out->push_back(in[i]);
			continue;
		}
		if (i + 2 >= in.size() || !std::isxdigit(static_cast<unsigned char>(in[i + 1])) ||
		    !std::isxdigit(static_cast<unsigned char>(in[i + 2])))
			return false;
		out->push_back(static_cast<char>(std::strtol(in.substr(i + 1, 2).c_str(), nullptr, 16)));
		i += 2;
	}
	return true;
}

bool
ParseInt(const std::string &s, int lo, int hi, int *out)
{
	if (s.empty() || s.size() > 9)
		return false;
	for (char c : s)
		if (!std::isdigit(static_cast<unsigned char>(c)))
			return false;
	int v = std::atoi(s.c_str());
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

// ParseHostPort reads host[:port] or [v6][:port]; *port keeps its default when none is given.
bool
ParseHostPort(const std::string &hostport, std::string *host, int *port_out, std::string *error)
{
	std::string port;
	if (!hostport.empty() && hostport[0] == '[') {
		size_t close = hostport.find(']');
		if (close == std::string::npos) {
			*error = "unterminated IPv6 address";
			return false;
		}
		*host = hostport.substr(1, close - 1);
		if (close + 1 < hostport.size()) {
			if (hostport[close + 1] != ':') {
				*error = "junk after IPv6 address";
				return false;
			}
			port = hostport.substr(close + 2);
		}
	} else {
		size_t colon = hostport.find(':');
		if (colon != std::string::npos) {
			*host = hostport.substr(0, colon);
			port = hostport.substr(colon + 1);
		} else if (!hostport.empty())
			*host = hostport;
	}
	if (host->empty())
		*host = "127.0.0.1";
	if (!port.empty() && !ParseInt(port, 1, 65535, port_out)) {
		*error = "port must be a number from 1 to 65535";
		return false;
	}
	return true;
}

// ParseHostList reads host[:port][,host[:port]...] (each port default_port unless given).
bool
ParseHostList(const std::string &hosts, int default_port, const char *what, std::vector<RedisEndpoint> *out,
              std::string *error)
{
	size_t pos = 0;
	while (pos <= hosts.size()) {
		size_t comma = hosts.find(',', pos);
		std::string one = hosts.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
		pos = comma == std::string::npos ? hosts.size() + 1 : comma + 1;
		if (one.empty()) {
			*error = std::string("empty ") + what + " address in the host list";
			return false;
		}
		RedisEndpoint e;
		e.port = default_port;
		if (!ParseHostPort(one, &e.host, &e.port, error))
			return false;
		out->push_back(e);
	}
	return true;
}

std::optional<RedisUrl>
Fail(std::string *error, const std::string &why)
{
	if (error)
		*error = why;
	return std::nullopt;
}

} // namespace

// TlsQuery is the TLS parameters of a redacted URL (file paths and names are not secret).
std::string
TlsQuery(const RedisTls &t, bool first)
{
	std::string q;
	auto add = [&](const char *k, const std::string &v) {
		if (!v.empty())
			q += std::string(first && q.empty() ? "?" : "&") + k + "=" + v;
	};
	add("cacert", t.cacert);
	add("cert", t.cert);
	add("key", t.key);
	add("sni", t.sni);
	add("insecure", t.insecure ? "1" : "");
	return q;
}

std::string
RedisUrl::Redacted() const
{
	std::string auth;
	if (!username.empty() || !password.empty())
		auth = username + (password.empty() ? "" : ":***") + "@";
	if (IsCluster() || IsSentinel()) {
		std::string hosts;
		for (const auto &e : IsCluster() ? cluster_nodes : sentinels) {
			bool ipv6 = e.host.find(':') != std::string::npos;
			hosts += (hosts.empty() ? "" : ",") + (ipv6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
		}
		if (IsCluster())
			return std::string(tls.enabled ? "rediss-cluster://" : "redis-cluster://") + auth + hosts + TlsQuery(tls, true);
		std::string q = db ? "?db=" + std::to_string(db) : "";
		if (!sentinel_password.empty() || !sentinel_username.empty())
			q += std::string(q.empty() ? "?" : "&") + "sentinel_username=" + sentinel_username +
			     (sentinel_password.empty() ? "" : "&sentinel_password=***");
		return std::string(tls.enabled ? "rediss-sentinel://" : "redis-sentinel://") + auth + hosts + "/" + master_name + q +
		       TlsQuery(tls, q.empty());
	}
	if (!unix_socket.empty())
		return "unix://" + auth + unix_socket + (db ? "?db=" + std::to_string(db) : "");
	bool v6 = host.find(':') != std::string::npos;
	return std::string(tls.enabled ? "rediss://" : "redis://") + auth + (v6 ? "[" + host + "]" : host) + ":" +
	       std::to_string(port) + "/" + std::to_string(db) + TlsQuery(tls, true);
}

std::optional<RedisUrl>
ParseRedisUrl(const std::string &url, std::string *error)
{
	RedisUrl r;
	std::string rest;
	bool is_unix = false, is_sentinel = false, is_cluster = false;
	if (url.rfind("redis://", 0) == 0)
		rest = url.substr(8);
	else if (url.rfind("redis-cluster://", 0) == 0) {
		rest = url.substr(16);
		is_cluster = true;
	} else if (url.rfind("rediss-cluster://", 0) == 0) {
		rest = url.substr(17);
		is_cluster = true;
		r.tls.enabled = true;
	} else if (url.rfind("rediss://", 0) == 0) {
		rest = url.substr(9);
		r.tls.enabled = true;
	} else if (url.rfind("redis-sentinel://", 0) == 0) {
		rest = url.substr(17);
		is_sentinel = true;
	} else if (url.rfind("rediss-sentinel://", 0) == 0) {
		rest = url.substr(18);
		is_sentinel = true;
		r.tls.enabled = true;
	} else if (url.rfind("unix://", 0) == 0) {
		rest = url.substr(7);
		is_unix = true;
	} else if (url.rfind("redis+unix://", 0) == 0) {
		rest = url.substr(13);
		is_unix = true;
	} else
		return Fail(error, "scheme must be redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster://, "
		                   "rediss-cluster:// or unix://");

	// userinfo ends at the last '@' so passwords may contain '@' when not encoded
	size_t at = rest.rfind('@');
	if (at != std::string::npos) {
		std::string userinfo = rest.substr(0, at);
		rest = rest.substr(at + 1);
		size_t colon = userinfo.find(':');
		std::string user = colon == std::string::npos ? "" : userinfo.substr(0, colon);
		std::string pass = colon == std::string::npos ? userinfo : userinfo.substr(colon + 1);
		if (!PercentDecode(user, &r.username) || !PercentDecode(pass, &r.password))
			return Fail(error, "bad percent-encoding in user or password");
	}

	std::string query;
	size_t q = rest.find('?');
	if (q != std::string::npos) {
		query = rest.substr(q + 1);
		rest = rest.substr(0, q);
	}

	if (is_sentinel) {
		size_t slash = rest.find('/');
		if (slash == std::string::npos || slash + 1 == rest.size())
			return Fail(error, "a redis-sentinel:// URL names its master after the hosts: redis-sentinel://h1:26379,h2:26379/mymaster");
		r.master_name = rest.substr(slash + 1);
		if (r.master_name.find('/') != std::string::npos)
			return Fail(error, "the master name must not contain '/' (the database goes in ?db=N)");
		std::string why;
		if (!ParseHostList(rest.substr(0, slash), 26379, "sentinel", &r.sentinels, &why))
			return Fail(error, why);
		r.host.clear();
		r.port = 0;
	} else if (is_cluster) {
		if (!rest.empty() && rest.back() == '/')
			rest.pop_back();
		if (rest.find('/') != std::string::npos)
			return Fail(error, "a redis-cluster:// URL names no database (a cluster has database 0 only)");
		std::string why;
		if (!ParseHostList(rest, 6379, "cluster node", &r.cluster_nodes, &why))
			return Fail(error, why);
		r.host.clear();
		r.port = 0;
	} else if (is_unix) {
		if (rest.empty() || rest[0] != '/')
			return Fail(error, "unix socket path must be absolute");
		r.unix_socket = rest;
	} else {
		std::string hostport = rest, path;
		size_t slash = rest.find('/');
		if (slash != std::string::npos) {
			hostport = rest.substr(0, slash);
			path = rest.substr(slash + 1);
		}
		std::string why;
		if (!ParseHostPort(hostport, &r.host, &r.port, &why))
			return Fail(error, why);
		if (!path.empty() && !ParseInt(path, 0, 1000000, &r.db))
			return Fail(error, "database must be a non-negative number");
	}

	// query parameters: db=N, password=..., username=... (ioredis/redis-py accept these too)
	size_t pos = 0;
	while (pos < query.size()) {
		size_t amp = query.find('&', pos);
		std::string kv = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
		pos = amp == std::string::npos ? query.size() : amp + 1;
		size_t eq = kv.find('=');
		std::string k = kv.substr(0, eq), v;
		if (eq == std::string::npos || !PercentDecode(kv.substr(eq + 1), &v))
			return Fail(error, "bad query parameter '" + k + "'");
		if (k == "db") {
			if (!ParseInt(v, 0, 1000000, &r.db))
				return Fail(error, "database must be a non-negative number");
			if (is_cluster && r.db != 0)
				return Fail(error, "a redis-cluster:// URL names no database (a cluster has database 0 only)");
		} else if (k == "password")
			r.password = v;
		else if (k == "username" || k == "user")
			r.username = v;
		else if (is_sentinel && k == "sentinel_password")
			r.sentinel_password = v;
		else if (is_sentinel && (k == "sentinel_username" || k == "sentinel_user"))
			r.sentinel_username = v;
		else if (r.tls.enabled && (k == "cacert" || k == "cert" || k == "key" || k == "sni")) {
			if (v.empty())
				return Fail(error, "query parameter '" + k + "' is empty");
			(k == "cacert" ? r.tls.cacert : k == "cert" ? r.tls.cert
			                            : k == "key"    ? r.tls.key
			                                            : r.tls.sni) = v;
		} else if (r.tls.enabled && k == "insecure") {
			if (v != "0" && v != "1")
				return Fail(error, "insecure must be 0 or 1");
			r.tls.insecure = v == "1";
		} else if (!r.tls.enabled && (k == "cacert" || k == "cert" || k == "key" || k == "sni" || k == "insecure"))
			return Fail(error, "query parameter '" + k + "' needs a TLS URL (rediss://, rediss-sentinel:// or rediss-cluster://)");
		else
			return Fail(error, "unknown query parameter '" + k + "'");
	}
	if (r.tls.cert.empty() != r.tls.key.empty())
		return Fail(error, "cert and key go together (the client certificate and its private key)");
	return r;
}

std::string
InsecureWarning(const std::vector<RedisUrl> &urls)
{
	for (const auto &u : urls)
		if (u.tls.enabled && u.tls.insecure)
			return "the Redis URL " + u.Redacted() +
			       " says insecure=1: the server's certificate is not verified (give its CA with cacert= instead)";
	return "";
}

} // namespace chat_outbox
