// daemon/src/consumer/core/lease.hpp - one partition's lease as this consumer sees it, and its timing.
//
// A lease is the key "<prefix>:<partition queue>:lease" on the partition's shard, holding the
// holder of the one consumer allowed to work the partition (LeaseHolder: its identity and a token of
// its process), with a time-to-live (--lease-ttl).
// The states, and what this consumer does in each:
//   Free       holds nothing for the partition and runs nothing;
//   Acquiring  an acquire (SET NX PX, or already ours) is out;
//   Held       the lease is ours and renewed every tick; the partition's BullMQ consumer runs;
//   Draining   we must give the partition up (another member's turn, or SIGTERM): the consumer
//              fetches nothing more and finishes what it holds; the lease is still renewed;
//   Releasing  the consumer has stopped; the value-checking delete of the lease is out;
//   Lost       the lease is no longer ours (a renewal found another value or none, or no renewal
//              was confirmed within the ttl): the consumer fetches nothing at once and stops;
//              nothing is released (it is not ours). Free once the consumer has stopped.
// Transitions are NextLeaseStep's table; the I/O that carries out each action is the partition
// manager's (consumer/partition_manager.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace chat_outboxd {

enum class LeaseState { Free,
	                    Acquiring,
	                    Held,
	                    Draining,
	                    Releasing,
	                    Lost };

enum class LeaseEvent {
	Tick,            // the periodic check, with `wanted` = the partition is ours by the assignment and we are not stopping
	AcquireWon,      // the acquire set the lease to us (or found it ours)
	AcquireRefused,  // another consumer holds it
	AcquireUnknown,  // no answer: the lease may or may not be ours
	RenewRefused,    // a renewal found the lease gone or another consumer's
	Expired,         // no renewal confirmed for a whole ttl (Redis unreachable, or this process was paused)
	ConsumerStopped, // the partition's consumer finished and closed
	ReleaseDone,     // the release answered (or will never: the lease expires by itself)
};

enum class LeaseAction {
	None,
	Acquire,       // send the acquire script
	StartConsumer, // start the partition's BullMQ consumer
	Drain,         // stop the consumer gracefully: no new fetch, finish in-flight jobs
	Abort,         // stop the consumer now: no new fetch or batch; what is in flight may finish
	Release,       // send the value-checking delete
};

struct LeaseStep {
	LeaseState next;
	LeaseAction action;
};

LeaseStep NextLeaseStep(LeaseState state, LeaseEvent event, bool wanted);

// RenewsLease: in this state the lease is renewed at every tick.
bool RenewsLease(LeaseState state);

// Working: the partition's consumer may fetch and start batches (Held only).
bool Working(LeaseState state);

const char *LeaseStateName(LeaseState state); // "free", "acquiring", ...

// LeaseTiming derives every lease period from --lease-ttl:
//   tick      = ttl / 3: renewals, the member heartbeat and the assignment check; two ticks may
//               fail before the ttl runs out;
//   member    = ttl: a member not heard of for a ttl is dead, like its leases;
//   takeover  = ttl + tick: the longest a SIGKILLed holder's partition waits, counted from the
//               holder's last tick, for a live member to acquire it (its leases and member entry
//               run out a ttl after that tick, and the new holder looks at most a tick later), plus
//               the new consumer's connect and start.
struct LeaseTiming {
	int64_t ttl_ms;
	int64_t tick_ms;
	int64_t member_ttl_ms;
	int64_t takeover_ms;
};

LeaseTiming LeaseTimingFor(int64_t ttl_ms);

// ValidUntil: a renewal (or acquire) sent at sent_ms (monotonic) and confirmed keeps the lease ours
// until sent_ms + ttl. Redis ran it no earlier than it was sent, so the key outlives this bound:
// locally the lease ends first.
int64_t ValidUntil(int64_t sent_ms, int64_t ttl_ms);

// LeaseHolder: the value this process's leases hold, "<identity>#<token>" (the token in hex). The
// token is drawn once per process, so two processes started with the same --identity (a paused
// daemon that comes back beside its replacement) never hold, renew or release each other's leases:
// acquire, renew, release and the fetch's fence compare the whole value. The price: a restart under
// the same identity waits for its predecessor's leases to expire, like any other daemon, since no
// process can tell a dead predecessor from a paused one.
std::string LeaseHolder(const std::string &identity, uint64_t token);

// LeaseHolderIdentity: the identity part of a lease's value (all of it for a value without '#',
// which a daemon before the token wrote).
std::string LeaseHolderIdentity(const std::string &holder);

} // namespace chat_outboxd
