// tests/unit/common/cluster_map_watch_test.cpp - when a cluster client reads the slot map again while a
// master is lost, and when the map ends its wait (common/cluster_map_watch.hpp).
#include <gtest/gtest.h>

#include "common/backoff.hpp"
#include "common/cluster_map_watch.hpp"

using namespace chat_outbox;

TEST(ClusterMapWatch, SteadyReadsNothing)
{
	ClusterMapWatch w;
	EXPECT_EQ(w.State(), ClusterWatchState::kSteady);
	EXPECT_FALSE(w.Due(0));
	EXPECT_FALSE(w.Due(1000000));
	EXPECT_EQ(w.MapRead({"10.0.0.1:7000"}, 0), ClusterMapNews::kUnchanged); // nothing waited for
}

// The relays' case: a master SIGKILLed; its replica is promoted seconds later. The map is read every
// kClusterRefreshMs, far more often than the reconnect backoff (capped at kServerRetryMaxMs), and the
// read that names the promoted replica ends the wait at once.
TEST(ClusterMapWatch, FollowsThePromotionAtTheRefreshPace)
{
	static_assert(kClusterRefreshMs < kServerRetryMaxMs, "the map must be read more often than the backoff retries");
	ClusterMapWatch w;
	w.MasterLost("127.0.0.1:7001", 1000);
	EXPECT_EQ(w.State(), ClusterWatchState::kWatching);
	EXPECT_TRUE(w.Lost("127.0.0.1:7001"));
	EXPECT_FALSE(w.Lost("127.0.0.1:7000"));
	EXPECT_FALSE(w.Due(1000));
	EXPECT_FALSE(w.Due(1000 + kClusterRefreshMs - 1));
	EXPECT_TRUE(w.Due(1000 + kClusterRefreshMs));
	// no failover yet: the map still names the dead master; read again kClusterRefreshMs later
	int64_t t = 1000 + kClusterRefreshMs;
	EXPECT_EQ(w.MapRead({"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}, t), ClusterMapNews::kUnchanged);
	EXPECT_FALSE(w.Due(t + kClusterRefreshMs - 1));
	EXPECT_TRUE(w.Due(t + kClusterRefreshMs));
	// another master lost meanwhile does not push the next read back
	w.MasterLost("127.0.0.1:7001", t + 10);
	EXPECT_TRUE(w.Due(t + kClusterRefreshMs));
	// no map could be read (every node asked failed): wait on
	t += kClusterRefreshMs;
	EXPECT_EQ(w.MapRead({}, t), ClusterMapNews::kUnchanged);
	// the replica promoted: the map names a new master for the dead one's slots
	t += kClusterRefreshMs;
	EXPECT_EQ(w.MapRead({"127.0.0.1:7000", "127.0.0.1:7004", "127.0.0.1:7002"}, t), ClusterMapNews::kPromoted);
	EXPECT_EQ(w.State(), ClusterWatchState::kSteady);
	EXPECT_FALSE(w.Due(t + 10 * kClusterRefreshMs));
	EXPECT_FALSE(w.Lost("127.0.0.1:7001"));
}

// A cluster that is really down (no replica to promote): the map keeps naming the dead master, the wait
// never ends early, and the caller's backoff decides when to try again.
TEST(ClusterMapWatch, NoNewMasterNoEarlyRetry)
{
	ClusterMapWatch w;
	w.MasterLost("h:1", 0);
	for (int64_t t = kClusterRefreshMs; t < 60000; t += kClusterRefreshMs) {
		ASSERT_TRUE(w.Due(t));
		ASSERT_EQ(w.MapRead({"h:1", "h:2"}, t), ClusterMapNews::kUnchanged);
	}
	EXPECT_EQ(w.State(), ClusterWatchState::kWatching);
}

// Two masters lost: the wait ends when neither serves slots any more; one answering again is not lost.
TEST(ClusterMapWatch, EveryLostMasterReplacedOrBack)
{
	ClusterMapWatch w;
	w.MasterLost("h:1", 0);
	w.MasterLost("h:2", 0);
	EXPECT_EQ(w.MapRead({"h:4", "h:2", "h:3"}, 250), ClusterMapNews::kUnchanged); // h:2 not replaced yet
	EXPECT_EQ(w.MapRead({"h:4", "h:5", "h:3"}, 500), ClusterMapNews::kPromoted);

	ClusterMapWatch back;
	back.MasterLost("h:1", 0);
	back.MasterLost("h:2", 0);
	back.MasterAnswered("h:2"); // restarted before any failover: it answers again
	EXPECT_EQ(back.State(), ClusterWatchState::kWatching);
	EXPECT_EQ(back.MapRead({"h:4", "h:2", "h:3"}, 250), ClusterMapNews::kPromoted);
	back.MasterLost("h:1", 1000);
	back.MasterAnswered("h:1");
	EXPECT_EQ(back.State(), ClusterWatchState::kSteady); // the last lost one back: nothing to watch
	EXPECT_FALSE(back.Due(5000));
}
