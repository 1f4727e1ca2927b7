// common/redis_url.hpp - parse redis:// URLs, shared by the relay and the daemon.
//
// Pure C++: no Postgres headers, no I/O, so it is unit-tested without servers.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace chat_outbox {

struct RedisEndpoint {
	std::string host;
	int port = 26379;
};

// RedisTls: the TLS half of a rediss://, rediss-sentinel:// or rediss-cluster:// URL, its query parameters named like
// redis-cli's options. enabled is the scheme's choice; the server's certificate is verified (chain
// against cacert, or the system store when cacert is empty, and the name: sni, else the host
// connected to) unless insecure. cert and key: the client certificate, both or neither.
struct RedisTls {
	bool enabled = false;
	std::string cacert;
	std::string cert;
	std::string key;
	std::string sni;
	bool insecure = false;
};

struct RedisUrl {
	std::string host = "127.0.0.1";
	int port = 6379;
	std::string username; // empty: AUTH <password> (Redis < 6 style / default user)
	std::string password; // empty: no AUTH
	int db = 0;
	std::string unix_socket; // set for redis+unix:///path or unix:///path

	// Set for redis-sentinel://: the master is found by asking these sentinels (in order) for
	// master_name; host and port above are then unset until a discovery fills them in a copy.
	// username/password authenticate to the master; sentinel_username/sentinel_password (query
	// parameters) to the sentinels, which have their own ACLs.
	std::vector<RedisEndpoint> sentinels;
	std::string master_name;
	std::string sentinel_username;
	std::string sentinel_password;

	// Set for redis-cluster://: the seed nodes, asked in turn for the slot map (common/redis_cluster.hpp);
	// host and port above are then unset; username/password authenticate to every node.
	std::vector<RedisEndpoint> cluster_nodes;
	// rediss://, rediss-sentinel:// and rediss-cluster:// (every connection of the URL, sentinels and every
	// cluster node too, speaks TLS; a cluster node's name to verify is its address in CLUSTER SLOTS, or sni).
	RedisTls tls;

	bool IsSentinel() const { return !master_name.empty(); }
	bool IsCluster() const { return !cluster_nodes.empty(); }
	// Redacted form for logs: the password never reaches a log line.
	std::string Redacted() const;
};

// ParseRedisUrl accepts redis://[[user]:password@]host[:port][/db] (percent-encoded user and
// password, IPv6 in brackets), unix:///path/to.sock[?db=N] and
// redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/<master name>[?db=N] (port 26379
// unless given; sentinel_username= and sentinel_password= query parameters authenticate to the
// sentinels), and redis-cluster://[[user]:password@]host[:port][,host[:port]...] (port 6379 unless
// given; a cluster has database 0 only). rediss://, rediss-sentinel:// and rediss-cluster:// are the TLS
// forms of the three, which also take cacert=, cert=, key=, sni= and insecure=1 (RedisTls). Returns nullopt and sets *error
// when the URL is malformed, so callers can report the reason instead of guessing.
std::optional<RedisUrl> ParseRedisUrl(const std::string &url, std::string *error);

// InsecureWarning: what a process logs once at start when one of its Redis URLs says insecure=1
// ("" when none does): its connections then skip the certificate check.
std::string InsecureWarning(const std::vector<RedisUrl> &urls);

} // namespace chat_outbox
