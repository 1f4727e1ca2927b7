// tests/unit/gateway/timer_heap_test.cpp - the gateway's deadline heap (daemon/src/gateway/client/core/timer_heap.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "gateway/client/core/timer_heap.hpp"

using chat_outboxd::TimerHeap;
using chat_outboxd::TimerNode;

namespace {

std::vector<TimerNode *>
DrainAll(TimerHeap &h, int64_t now)
{
	std::vector<TimerNode *> out;
	while (TimerNode *n = h.PopDue(now))
		out.push_back(n);
	return out;
}

} // namespace

TEST(TimerHeap, PopsOnlyWhatIsDueInOrder)
{
	TimerHeap h;
	TimerNode a, b, c;
	h.Schedule(&b, 20);
	h.Schedule(&c, 30);
	h.Schedule(&a, 10);
	EXPECT_EQ(h.NextDue(), 10);
	EXPECT_EQ(h.PopDue(9), nullptr);
	EXPECT_EQ(DrainAll(h, 20), (std::vector<TimerNode *>{&a, &b}));
	EXPECT_FALSE(a.Scheduled());
	EXPECT_TRUE(c.Scheduled());
	EXPECT_EQ(h.Size(), 1u);
}

TEST(TimerHeap, RescheduleMovesANodeBothWays)
{
	TimerHeap h;
	TimerNode a, b, c;
	h.Schedule(&a, 10);
	h.Schedule(&b, 20);
	h.Schedule(&c, 30);
	h.Schedule(&a, 40); // later: a pong pushed the next ping out
	h.Schedule(&c, 5);  // earlier
	EXPECT_EQ(h.Size(), 3u);
	EXPECT_EQ(DrainAll(h, 100), (std::vector<TimerNode *>{&c, &b, &a}));
}

TEST(TimerHeap, CancelAnywhereKeepsTheRestOrdered)
{
	TimerHeap h;
	std::vector<TimerNode> nodes(100);
	for (size_t i = 0; i < nodes.size(); i++)
		h.Schedule(&nodes[i], static_cast<int64_t>((i * 37) % 100));
	for (size_t i = 0; i < nodes.size(); i += 3)
		h.Cancel(&nodes[i]);
	h.Cancel(&nodes[0]); // twice is harmless
	std::vector<TimerNode *> got = DrainAll(h, 1000);
	EXPECT_EQ(got.size(), 66u);
	EXPECT_TRUE(std::is_sorted(got.begin(), got.end(), [](TimerNode *x, TimerNode *y) { return x->due < y->due; }));
	for (size_t i = 0; i < nodes.size(); i += 3)
		EXPECT_EQ(std::count(got.begin(), got.end(), &nodes[i]), 0);
}

// The gateway drops every deadline at shutdown and its owners still cancel theirs afterwards (lws
// reports each connection closed while its context is destroyed): a cleared node is idle, so that
// late Cancel is a no-op, and the node can be scheduled again.
TEST(TimerHeap, ClearLeavesEveryNodeIdle)
{
	TimerHeap h;
	std::vector<TimerNode> nodes(10);
	for (size_t i = 0; i < nodes.size(); i++)
		h.Schedule(&nodes[i], static_cast<int64_t>(i));
	h.Clear();
	EXPECT_TRUE(h.Empty());
	for (auto &n : nodes) {
		EXPECT_FALSE(n.Scheduled());
		h.Cancel(&n);
	}
	EXPECT_TRUE(h.Empty());
	h.Schedule(&nodes[3], 5);
	EXPECT_EQ(DrainAll(h, 10), (std::vector<TimerNode *>{&nodes[3]}));
}

// The gateway's pattern at scale: 10,000 heartbeats, each pong moves one to now + interval.
TEST(TimerHeap, TenThousandHeartbeatsStayOrderedUnderReschedules)
{
	TimerHeap h;
	std::vector<TimerNode> beats(10000);
	std::mt19937 rng(42);
	for (auto &n : beats)
		h.Schedule(&n, static_cast<int64_t>(rng() % 25000));
	for (int64_t now = 0; now < 50000; now += 7) {
		TimerNode &n = beats[rng() % beats.size()];
		h.Schedule(&n, now + 25000);
	}
	EXPECT_EQ(h.Size(), beats.size());
	std::vector<TimerNode *> got = DrainAll(h, 1 << 30);
	EXPECT_EQ(got.size(), beats.size());
	EXPECT_TRUE(std::is_sorted(got.begin(), got.end(), [](TimerNode *x, TimerNode *y) { return x->due < y->due; }));
	EXPECT_TRUE(h.Empty());
}
