// tests/unit/net/cluster_route_test.cpp - where the daemon's link to a Redis Cluster sends a command and
// what a node's reply tells it (daemon/src/net/core/cluster_route.hpp).
#include <gtest/gtest.h>

#include "net/core/cluster_route.hpp"
#include "common/bullmq/queue_keys.hpp"
#include "common/partitions.hpp"

using namespace chat_outboxd;
using chat_outbox::KeySlot;

namespace {

RedisValue
Node(const std::string &host, int64_t port)
{
	return RedisValue::Arr({RedisValue::Str(host), RedisValue::Int(port), RedisValue::Str("id")});
}

RedisValue
Range(int64_t first, int64_t last, std::vector<RedisValue> nodes)
{
	std::vector<RedisValue> e = {RedisValue::Int(first), RedisValue::Int(last)};
	for (auto &n : nodes)
		e.push_back(std::move(n));
	return RedisValue::Arr(std::move(e));
}

} // namespace

TEST(ClusterRoute, ScriptsGoByTheirFirstKeyAndKeylessCommandsHome)
{
	const std::string queue = chat_outbox::ClusterQueueName(chat_outbox::PartitionQueue("chat-messages", 8, 3));
	const std::string wait = chat_outbox::bullmq::QueueKey("bull", queue, "wait");
	const int home = 77;
	EXPECT_EQ(CommandSlot({"EVALSHA", "abc", "2", wait, "bull:x", "arg"}, home), KeySlot(wait));
	EXPECT_EQ(CommandSlot({"EVAL", "return 1", "1", wait}, home), KeySlot(wait));
	EXPECT_EQ(CommandSlot({"EVALSHA", "abc", "0", "arg"}, home), home); // a script without keys
	EXPECT_EQ(CommandSlot({"BZPOPMIN", wait, "5"}, home), KeySlot(wait));
	EXPECT_EQ(CommandSlot({"LLEN", wait}, home), KeySlot(wait));
	// the queue's keys share its tag: a lease and the wait list are in one slot
	EXPECT_EQ(KeySlot(chat_outbox::bullmq::QueueKey("bull", queue, "lease")), KeySlot(wait));
	for (const auto &argv : std::vector<std::vector<std::string>>{{"PUBLISH", "ch", "m"},
	                                                              {"CLIENT", "LIST"},
	                                                              {"client", "unblock", "7"},
	                                                              {"CONFIG", "GET", "appendonly"},
	                                                              {"INFO", "persistence"},
	                                                              {"PING"}})
		EXPECT_EQ(CommandSlot(argv, home), home) << argv[0];
}

TEST(ClusterRoute, RepliesSayWhatToDo)
{
	EXPECT_EQ(ClassifyClusterReply(nullptr).turn, ClusterTurn::kRefresh); // no answer: read the map again
	RedisValue ok = RedisValue::Int(1);
	EXPECT_EQ(ClassifyClusterReply(&ok).turn, ClusterTurn::kAnswer);
	RedisValue plain = RedisValue::Err("ERR wrong number of arguments");
	EXPECT_EQ(ClassifyClusterReply(&plain).turn, ClusterTurn::kAnswer); // the caller's answer
	RedisValue moved = RedisValue::Err("MOVED 3999 127.0.0.1:6381");
	auto m = ClassifyClusterReply(&moved);
	ASSERT_EQ(m.turn, ClusterTurn::kMoved);
	EXPECT_EQ(m.redirect->slot, 3999);
	EXPECT_EQ(m.redirect->target.port, 6381);
	RedisValue ask = RedisValue::Err("ASK 12 :7000");
	auto a = ClassifyClusterReply(&ask);
	ASSERT_EQ(a.turn, ClusterTurn::kAsk);
	EXPECT_EQ(a.redirect->target.host, ""); // the replying node's host: ClusterConn fills it in
	RedisValue down = RedisValue::Err("CLUSTERDOWN The cluster is down");
	EXPECT_EQ(ClassifyClusterReply(&down).turn, ClusterTurn::kRefresh);
	RedisValue again = RedisValue::Err("TRYAGAIN Multiple keys request during rehashing of slot");
	EXPECT_EQ(ClassifyClusterReply(&again).turn, ClusterTurn::kRefresh);
}

TEST(ClusterRoute, SlotMapFromClusterSlots)
{
	RedisValue reply = RedisValue::Arr({Range(0, 5460, {Node("10.0.0.1", 7000), Node("10.0.0.4", 7003)}),
	                                    Range(5461, 10922, {Node("", 7001)}), // no announced host: the one asked
	                                    Range(10923, 16383, {Node("?", 7002)})});
	std::vector<chat_outbox::SlotRange> ranges;
	std::string error;
	ASSERT_TRUE(SlotRangesFromValue(reply, "10.0.0.9", &ranges, &error)) << error;
	ASSERT_EQ(ranges.size(), 3u);
	EXPECT_EQ(ranges[0].master.host, "10.0.0.1");
	ASSERT_EQ(ranges[0].replicas.size(), 1u);
	EXPECT_EQ(ranges[1].master.host, "10.0.0.9");
	EXPECT_EQ(ranges[2].master.host, "10.0.0.9");
	auto map = chat_outbox::SlotMap::Build(ranges, &error);
	ASSERT_TRUE(map) << error;
	EXPECT_TRUE(map->Covered());
	EXPECT_EQ(map->MasterOf(5461)->port, 7001);

	RedisValue refused = RedisValue::Err("ERR This instance has cluster support disabled");
	EXPECT_FALSE(SlotRangesFromValue(refused, "h", &ranges, &error));
	EXPECT_NE(error.find("cluster support disabled"), std::string::npos);
	RedisValue bad = RedisValue::Arr({RedisValue::Arr({RedisValue::Int(0), RedisValue::Int(5)})});
	EXPECT_FALSE(SlotRangesFromValue(bad, "h", &ranges, &error));
	RedisValue bad_slots = RedisValue::Arr({Range(10, 5, {Node("h", 1)})});
	EXPECT_FALSE(SlotRangesFromValue(bad_slots, "h", &ranges, &error));
}
