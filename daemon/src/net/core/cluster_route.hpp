// daemon/src/net/core/cluster_route.hpp - the pure decisions of ClusterConn (net/cluster_conn.hpp), the
// daemon's link to a Redis Cluster: which slot a command goes to, what a node's reply tells the link to
// do, and the slot map read from CLUSTER SLOTS. The cluster's own rules (a key's slot, MOVED/ASK text,
// the map) are common/redis_cluster.hpp's; this file only applies them to the daemon's RedisValue.
//
// Pure: no I/O, unit-tested without servers (tests/unit/net/cluster_route_test.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "net/core/redis_value.hpp"
#include "common/redis_cluster.hpp"

namespace chat_outboxd {

// CommandSlot: the slot whose master must run argv. A script (EVAL/EVALSHA) goes by its first key
// (every key of one call shares a slot: the queue's hash tag); a command that names no key (PUBLISH,
// CLIENT, CONFIG, INFO, PING, a script without keys) goes to home_slot, the slot its owner is
// tied to; every other command goes by its first argument, its key.
int CommandSlot(const std::vector<std::string> &argv, int home_slot);

// What a cluster node's reply tells the link to do with the command that got it.
enum class ClusterTurn {
	kAnswer,  // the reply is the command's answer (an ordinary error included)
	kMoved,   // MOVED: the slot lives elsewhere; refresh the map, send again to the target
	kAsk,     // ASK: the slot is migrating and this key already left; ASKING + the command on the target, once
	kRefresh, // CLUSTERDOWN, TRYAGAIN, or no reply at all: the command failed; read the map again
};
struct ClusterReplyStep {
	ClusterTurn turn = ClusterTurn::kAnswer;
	std::optional<chat_outbox::Redirect> redirect; // kMoved and kAsk
};
// ClassifyClusterReply: reply nullptr is a command that got no answer (connection lost or timed out).
ClusterReplyStep ClassifyClusterReply(const RedisValue *reply);

// SlotRangesFromValue reads CLUSTER SLOTS' reply; false with *error on an error reply or a malformed one.
// A node entry without a host (Redis 7 may announce "" or "?" when it does not know its address) takes
// from_host, the host of the node that answered, as the cluster protocol says.
bool SlotRangesFromValue(const RedisValue &reply, const std::string &from_host,
                         std::vector<chat_outbox::SlotRange> *out, std::string *error);

// kMaxClusterHops: a command redirected more often than this in one go is failed (a cluster in flux);
// its caller tries again as after any failure.
inline constexpr int kMaxClusterHops = 5;

} // namespace chat_outboxd
