// daemon/src/consumer/core/lease.cpp - see lease.hpp.
#include "consumer/core/lease.hpp"

#include <cinttypes>
#include <cstdio>

namespace chat_outboxd {

LeaseStep
NextLeaseStep(LeaseState s, LeaseEvent e, bool wanted)
{
	using S = LeaseState;
	using E = LeaseEvent;
	using A = LeaseAction;
	switch (s) {
	case S::Free:
		if (e == E::Tick && wanted)
			return {S::Acquiring, A::Acquire};
		break;
	case S::Acquiring:
		if (e == E::AcquireWon)
			return wanted ? LeaseStep{S::Held, A::StartConsumer} : LeaseStep{S::Releasing, A::Release};
		if (e == E::AcquireRefused)
			return {S::Free, A::None};
		// the acquire may have run: while wanted, the next acquire finds it ours; else delete it if ours
		if (e == E::AcquireUnknown)
			return wanted ? LeaseStep{S::Free, A::None} : LeaseStep{S::Releasing, A::Release};
		break;
	case S::Held:
		if (e == E::Tick && !wanted)
			return {S::Draining, A::Drain};
		if (e == E::RenewRefused || e == E::Expired)
			return {S::Lost, A::Abort};
		if (e == E::ConsumerStopped) // it stopped by itself: nothing is in flight
			return {S::Releasing, A::Release};
		break;
	case S::Draining:
		if (e == E::RenewRefused || e == E::Expired)
			return {S::Lost, A::Abort};
		if (e == E::ConsumerStopped)
			return {S::Releasing, A::Release};
		break;
	case S::Releasing:
		if (e == E::ReleaseDone)
			return {S::Free, A::None};
		break;
	case S::Lost:
		if (e == E::ConsumerStopped)
			return {S::Free, A::None};
		break;
	}
	return {s, A::None};
}

bool
RenewsLease(LeaseState s)
{
	return s == LeaseState::Held || s == LeaseState::Draining;
}

bool
Working(LeaseState s)
{
	return s == LeaseState::Held;
}

const char *
LeaseStateName(LeaseState s)
{
	switch (s) {
	case LeaseState::Free:
		return "free";
	case LeaseState::Acquiring:
		return "acquiring";
	case LeaseState::Held:
		return "held";
	case LeaseState::Draining:
		return "draining";
	case LeaseState::Releasing:
		return "releasing";
	case LeaseState::Lost:
		return "lost";
	}
	return "?";
}

LeaseTiming
LeaseTimingFor(int64_t ttl_ms)
{
	LeaseTiming t;
	t.ttl_ms = ttl_ms;
	t.tick_ms = ttl_ms / 3 > 0 ? ttl_ms / 3 : 1;
	t.member_ttl_ms = ttl_ms;
	t.takeover_ms = ttl_ms + t.tick_ms;
	return t;
}

int64_t
ValidUntil(int64_t sent_ms, int64_t ttl_ms)
{
	return sent_ms + ttl_ms;
}

std::string
LeaseHolder(const std::string &identity, uint64_t token)
{
	char hex[17];
	std::snprintf(hex, sizeof hex, "%016" PRIx64, token);
	return identity + "#" + hex;
}

std::string
LeaseHolderIdentity(const std::string &holder)
{
	size_t hash = holder.rfind('#');
	return hash == std::string::npos ? holder : holder.substr(0, hash);
}

} // namespace chat_outboxd
