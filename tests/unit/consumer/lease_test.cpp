// tests/unit/consumer/lease_test.cpp - a partition lease's states, and the periods derived from --lease-ttl.
#include <gtest/gtest.h>

#include "consumer/core/lease.hpp"

using namespace chat_outboxd;
using S = LeaseState;
using E = LeaseEvent;
using A = LeaseAction;

namespace {

void
ExpectStep(S from, E e, bool wanted, S to, A action)
{
	LeaseStep st = NextLeaseStep(from, e, wanted);
	EXPECT_EQ(st.next, to) << LeaseStateName(from) << " -> " << LeaseStateName(st.next);
	EXPECT_EQ(st.action, action) << LeaseStateName(from);
}

} // namespace

TEST(Lease, AcquireThenWork)
{
	ExpectStep(S::Free, E::Tick, false, S::Free, A::None);
	ExpectStep(S::Free, E::Tick, true, S::Acquiring, A::Acquire);
	ExpectStep(S::Acquiring, E::AcquireWon, true, S::Held, A::StartConsumer);
	ExpectStep(S::Acquiring, E::AcquireRefused, true, S::Free, A::None);
	ExpectStep(S::Acquiring, E::Tick, true, S::Acquiring, A::None); // one acquire at a time
}

TEST(Lease, WonAfterItWasNoLongerWantedIsGivenBack)
{
	ExpectStep(S::Acquiring, E::AcquireWon, false, S::Releasing, A::Release);
	// no answer: wanted, the next acquire finds it ours; unwanted, a value-checking delete
	ExpectStep(S::Acquiring, E::AcquireUnknown, true, S::Free, A::None);
	ExpectStep(S::Acquiring, E::AcquireUnknown, false, S::Releasing, A::Release);
}

TEST(Lease, GivingUpDrainsThenReleases)
{
	ExpectStep(S::Held, E::Tick, true, S::Held, A::None);
	ExpectStep(S::Held, E::Tick, false, S::Draining, A::Drain);
	ExpectStep(S::Draining, E::Tick, true, S::Draining, A::None); // a drain is not undone
	ExpectStep(S::Draining, E::ConsumerStopped, false, S::Releasing, A::Release);
	ExpectStep(S::Releasing, E::Tick, true, S::Releasing, A::None);
	ExpectStep(S::Releasing, E::ReleaseDone, true, S::Free, A::None);
}

TEST(Lease, LostStopsAtOnceAndReleasesNothing)
{
	for (S s : {S::Held, S::Draining})
		for (E e : {E::RenewRefused, E::Expired})
			ExpectStep(s, e, true, S::Lost, A::Abort);
	ExpectStep(S::Lost, E::Tick, true, S::Lost, A::None); // not acquired again before the consumer stopped
	ExpectStep(S::Lost, E::ConsumerStopped, true, S::Free, A::None);
}

TEST(Lease, OnlyHeldWorksAndHeldOrDrainingRenew)
{
	for (S s : {S::Free, S::Acquiring, S::Held, S::Draining, S::Releasing, S::Lost}) {
		EXPECT_EQ(Working(s), s == S::Held) << LeaseStateName(s);
		EXPECT_EQ(RenewsLease(s), s == S::Held || s == S::Draining) << LeaseStateName(s);
	}
}

TEST(Lease, Timing)
{
	LeaseTiming t = LeaseTimingFor(5000);
	EXPECT_EQ(t.tick_ms, 1666);
	EXPECT_EQ(t.member_ttl_ms, 5000);
	EXPECT_EQ(t.takeover_ms, 6666);
	EXPECT_LT(2 * t.tick_ms, t.ttl_ms); // two renewals may fail before the lease runs out
	EXPECT_EQ(ValidUntil(100, 5000), 5100);
}

TEST(Lease, HolderIsIdentityAndProcessToken)
{
	EXPECT_EQ(LeaseHolder("w1", 0xabcdef), "w1#0000000000abcdef");
	// two processes of one identity hold different values: neither renews the other's lease
	EXPECT_NE(LeaseHolder("w1", 1), LeaseHolder("w1", 2));
	EXPECT_EQ(LeaseHolderIdentity(LeaseHolder("w1", 7)), "w1");
	EXPECT_EQ(LeaseHolderIdentity(LeaseHolder("pod#3", 7)), "pod#3"); // the token is after the last '#'
	EXPECT_EQ(LeaseHolderIdentity("w1"), "w1");                       // a value written before the token
}
