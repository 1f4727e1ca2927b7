// daemon/src/consumer/core/partition_assignment.hpp - which live consumer works which partition.
//
// Every consumer of a service computes the same answer from the same input (the live members read
// from Redis and the partition count), so they agree without talking to each other. The rule:
//   - balanced: with k partitions and m members, every member gets k / m or k / m + 1;
//   - stable: a partition's member is chosen by a weight hash(member, partition) (rendezvous
//     hashing), greedily from the heaviest pair down, so a member joining or leaving moves few
//     partitions besides its own share;
//   - independent of the order members are listed in and of the process (a fixed hash, not std::hash).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chat_outboxd {

// PartitionWeight is the rendezvous weight of a (member, partition) pair (FNV-1a, then a 64-bit mix).
uint64_t PartitionWeight(const std::string &member, int64_t partition);

// AssignPartitions returns, for each of `partitions`, the index into `members` of the member that
// works it. members must be distinct; empty members: every entry is members.size() (nobody).
std::vector<size_t> AssignPartitions(const std::vector<std::string> &members, const std::vector<int64_t> &partitions);

// PartitionsOf: the partitions of 0..n-1, minus `left_out` (partitions left to other consumers),
// that `me` works among `members` (me must be one of them), in increasing order.
std::vector<int64_t> PartitionsOf(const std::string &me, const std::vector<std::string> &members, int64_t n,
                                  const std::vector<int64_t> &left_out);

} // namespace chat_outboxd
