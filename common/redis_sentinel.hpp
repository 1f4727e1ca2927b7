// common/redis_sentinel.hpp - find the Redis master of a redis-sentinel:// URL.
//
// The rule, shared by the relay (extension and process) and the daemon: ask the URL's sentinels in
// turn, starting at a cursor the caller keeps, for SENTINEL get-master-addr-by-name <master>
// (after AUTH with the sentinel credentials when the URL has them); the first address a sentinel
// gives is used. A sentinel may be stale (partitioned away, or not yet told of a failover), so the
// connection to that address checks ROLE after its handshake and is dropped unless Redis says
// "master"; the caller then moves the cursor on and discovers again. Every connection error of a
// sentinel URL's client leads to a new discovery, which is how a failover is followed.
//
// The pure helpers are used by the async daemon too; DiscoverMaster is the blocking form (common/redis_blocking,
// with a timeout) for the relay.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/redis_url.hpp"

namespace chat_outbox {

// SentinelQueryCommands: what is sent to one sentinel, in order; the last reply is the address.
std::vector<std::vector<std::string>> SentinelQueryCommands(const RedisUrl &url);

// MasterFromReply reads the reply of get-master-addr-by-name: two strings (host, port), or a nil
// (is_nil) when that sentinel does not know the master.
std::optional<RedisEndpoint> MasterFromReply(bool is_nil, const std::vector<std::string> &elements,
                                             const std::string &master_name, std::string *error);

// MasterCheckCommand is sent after the handshake on a connection to a discovered address;
// RoleIsMaster checks the first element of its reply.
std::vector<std::string> MasterCheckCommand();
bool RoleIsMaster(const std::string &role);

// AtSentinel is the address of one of url's sentinels, reached as the URL says (rediss-sentinel://:
// TLS, with the URL's TLS parameters); nothing else of the URL (credentials, db) goes to a sentinel.
RedisUrl AtSentinel(const RedisUrl &url, const RedisEndpoint &sentinel);

// AtMaster is url with host and port set to the discovered master (the URL's credentials and db).
RedisUrl AtMaster(const RedisUrl &url, const RedisEndpoint &master);

// DiscoverMaster asks the sentinels in turn from *cursor (wrapping), each connect and command bounded
// by timeout_ms; on success *cursor is the sentinel that answered. nullopt with *error naming every
// sentinel's failure when none answered.
std::optional<RedisEndpoint> DiscoverMaster(const RedisUrl &url, int64_t timeout_ms, size_t *cursor,
                                            std::string *error);

} // namespace chat_outbox
