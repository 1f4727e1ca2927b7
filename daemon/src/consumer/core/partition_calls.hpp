// daemon/src/consumer/core/partition_calls.hpp - the Redis calls of the partition manager: members,
// layout and leases (docs/architecture.md, 'Partitions and leases').
//
// Keys (common/bullmq/queue_keys.hpp declares their names, so no job id can name them):
//   <prefix>:<queue>:members     on shard 0, a ZSET: member = consumer identity, score = the
//                                member's expiry (ms, Redis's clock); pruned by every heartbeat
//   <prefix>:<queue>:partitions  on shard 0, the partition count (written by the relay only)
//   <prefix>:<partition queue>:lease  on the partition's shard: its holder (core/lease.hpp's
//                                LeaseHolder: identity and process token), with a ttl
// Each call is one script, so a check and the write it guards are atomic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "net/core/redis_value.hpp"
#include "common/redis_script.hpp"

namespace chat_outboxd {

using ScriptCall = chat_outbox::ScriptCall;

// HeartbeatCall: drop expired members, (re)register `identity` for member_ttl_ms, and read the live
// members and the layout key. Reply: {members..., layout or nil}.
ScriptCall HeartbeatCall(const std::string &prefix, const std::string &queue, const std::string &identity,
                         int64_t member_ttl_ms);
// LeaveCall: deregister `identity` (SIGTERM, after every lease is released).
ScriptCall LeaveCall(const std::string &prefix, const std::string &queue, const std::string &identity);
// The lease calls take `holder`, LeaseHolder's value for this process: a lease is ours only while it
// holds exactly that value.
// AcquireCall: SET NX PX, or a fresh ttl when the lease is already ours (a reply that was lost).
// Decoded by DecodeAcquire.
ScriptCall AcquireCall(const std::string &prefix, const std::string &partition_queue, const std::string &holder,
                       int64_t ttl_ms);
// RenewCall: a fresh ttl only while the lease holds our value. 1 = renewed, 0 = not ours.
ScriptCall RenewCall(const std::string &prefix, const std::string &partition_queue, const std::string &holder,
                     int64_t ttl_ms);
// ReleaseCall: delete the lease only while it holds our value. 1 = deleted, 0 = not ours.
ScriptCall ReleaseCall(const std::string &prefix, const std::string &partition_queue, const std::string &holder);

struct Heartbeat {
	std::vector<std::string> members;  // sorted
	std::optional<std::string> layout; // the layout key's text; nullopt when absent
};

// DecodeHeartbeat reads HeartbeatCall's reply; false with *error on an error or a malformed reply.
bool DecodeHeartbeat(const RedisValue &reply, Heartbeat *out, std::string *error);

struct AcquireResult {
	bool won = false;
	int64_t left_ms = 0; // not won: the ms the other's lease has left (0: none, or about to go)
};

// DecodeAcquire reads AcquireCall's reply; nullopt on an error or anything else.
std::optional<AcquireResult> DecodeAcquire(const RedisValue &reply);

// DecodeFlag reads a 1/0 reply of the renew and release calls; nullopt on an error or anything else.
std::optional<bool> DecodeFlag(const RedisValue &reply);

// ParsePartitionList reads --leave-partitions: partition numbers separated by ',' or whitespace.
bool ParsePartitionList(const std::string &text, std::vector<int64_t> *out, std::string *error);

} // namespace chat_outboxd
