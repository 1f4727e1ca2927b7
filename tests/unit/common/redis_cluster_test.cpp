// tests/unit/common/redis_cluster_test.cpp - Redis Cluster's client rules: key slots and hash tags,
// the partition queues' names on a cluster, MOVED/ASK, the slot map, and redis-cluster:// URLs.
#include <gtest/gtest.h>

#include <set>

#include "common/bullmq/queue_keys.hpp"
#include "common/partitions.hpp"
#include "common/redis_cluster.hpp"
#include "common/redis_url.hpp"

using namespace chat_outbox;

TEST(ClusterKeySlot, KnownSlots)
{
	// the values CLUSTER KEYSLOT gives (and the cluster specification's CRC16 check value: "123456789")
	EXPECT_EQ(KeySlot("123456789"), 0x31C3 % kClusterSlots);
	EXPECT_EQ(KeySlot("foo"), 12182);
	EXPECT_EQ(KeySlot("bar"), 5061);
	EXPECT_EQ(KeySlot(""), 0);
}

TEST(ClusterKeySlot, HashTags)
{
	EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("user1000"));
	EXPECT_EQ(KeySlot("{user1000}.followers"), KeySlot("{user1000}.following"));
	// an empty tag is no tag: the whole key counts
	EXPECT_EQ(KeySlot("foo{}{bar}"), KeySlot(std::string("foo{}{bar}")));
	EXPECT_NE(KeySlot("foo{}{bar}"), KeySlot("bar"));
	// only the first '{' and the first '}' after it
	EXPECT_EQ(KeySlot("foo{{bar}}zap"), KeySlot("{bar"));
	EXPECT_EQ(KeySlot("foo{bar}{zap}"), KeySlot("bar"));
	// no closing brace: the whole key
	EXPECT_EQ(KeySlot("foo{bar"), KeySlot(std::string("foo{bar")));
}

TEST(ClusterQueue, EveryKeyOfAQueueInOneSlot)
{
	std::string q = ClusterQueueName(PartitionQueue("chat-messages", 8, 3));
	EXPECT_EQ(q, "{chat-messages-p3}");
	int slot = KeySlot(bullmq::QueueKey("bull", q, "wait"));
	for (auto name : bullmq::QueueKeyNames())
		EXPECT_EQ(KeySlot(bullmq::QueueKey("bull", q, name)), slot) << name;
	EXPECT_EQ(KeySlot(bullmq::QueueKey("bull", q, "0b9f3c1e-8d7a-4c7b-9a51-2f4c8e0d6a11")), slot);
	EXPECT_EQ(KeySlot(bullmq::BusChannel("bull", q)), slot);
	// the layout key of an unpartitioned queue is in that queue's slot (the add script checks it there)
	EXPECT_EQ(KeySlot(LayoutKey("bull", ClusterQueueName("chat-messages"))),
	          KeySlot(bullmq::QueueKey("bull", ClusterQueueName(PartitionQueue("chat-messages", 1, 0)), "wait")));
}

TEST(ClusterQueue, PartitionsSpreadOverThreeMasters)
{
	// redis-cli --cluster create gives three masters 0-5460, 5461-10922, 10923-16383
	auto master = [](int slot) { return slot <= 5460 ? 0 : slot <= 10922 ? 1
		                                                                 : 2; };
	for (int n : {4, 8, 16}) {
		std::set<int> used;
		for (int p = 0; p < n; p++)
			used.insert(master(KeySlot(bullmq::QueueKey("bull", ClusterQueueName(PartitionQueue("chat-messages", n, p)), "wait"))));
		EXPECT_EQ(used.size(), 3u) << n << " partitions";
	}
}

TEST(ClusterRedirect, MovedAndAsk)
{
	auto r = ParseRedirect("MOVED 3999 127.0.0.1:6381");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->kind, RedirectKind::kMoved);
	EXPECT_EQ(r->slot, 3999);
	EXPECT_EQ(r->target.host, "127.0.0.1");
	EXPECT_EQ(r->target.port, 6381);
	r = ParseRedirect("ASK 16383 [::1]:7000");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->kind, RedirectKind::kAsk);
	EXPECT_EQ(r->slot, 16383);
	EXPECT_EQ(r->target.host, "::1");
	EXPECT_EQ(r->target.port, 7000);
	r = ParseRedirect("MOVED 12 :7001"); // no host announced: the replying node's
	ASSERT_TRUE(r);
	EXPECT_EQ(r->target.host, "");
	EXPECT_EQ(r->target.port, 7001);
	EXPECT_FALSE(ParseRedirect("ERR unknown command"));
	EXPECT_FALSE(ParseRedirect("MOVED 16384 h:1"));
	EXPECT_FALSE(ParseRedirect("MOVED x h:1"));
	EXPECT_FALSE(ParseRedirect("MOVED 1 h:0"));
	EXPECT_FALSE(ParseRedirect("MOVED 1 h"));
	EXPECT_FALSE(ParseRedirect("CLUSTERDOWN The cluster is down"));
}

TEST(ClusterSlotMap, BuildLookUpMove)
{
	std::string err;
	std::vector<SlotRange> ranges = {
	    {0, 5460, {"127.0.0.1", 7000}, {{"127.0.0.1", 7003}}},
	    {5461, 10922, {"127.0.0.1", 7001}, {}},
	    {10923, 16383, {"127.0.0.1", 7002}, {}},
	};
	auto m = SlotMap::Build(ranges, &err);
	ASSERT_TRUE(m) << err;
	EXPECT_TRUE(m->Covered());
	EXPECT_EQ(m->MasterOf(0)->port, 7000);
	EXPECT_EQ(m->MasterOf(5461)->port, 7001);
	EXPECT_EQ(m->MasterOf(16383)->port, 7002);
	EXPECT_FALSE(m->MasterOf(16384));
	EXPECT_EQ(m->Masters().size(), 3u);
	m->Moved(5461, {"127.0.0.1", 7000});
	EXPECT_EQ(m->MasterOf(5461)->port, 7000);
	EXPECT_EQ(m->MasterOf(5462)->port, 7001);

	ranges.pop_back();
	m = SlotMap::Build(ranges, &err);
	ASSERT_TRUE(m);
	EXPECT_FALSE(m->Covered());
	EXPECT_FALSE(m->MasterOf(16000));

	ranges.push_back({5000, 6000, {"127.0.0.1", 7002}, {}});
	EXPECT_FALSE(SlotMap::Build(ranges, &err));
	EXPECT_NE(err.find("two ranges"), std::string::npos);
	EXPECT_FALSE(SlotMap::Build({{3, 2, {"h", 1}, {}}}, &err));
}

TEST(ClusterSlotMap, FromReply)
{
	std::string err;
	auto r = SlotRangeFromReply(0, 5460, {"127.0.0.1", "127.0.0.1"}, {7000, 7003}, &err);
	ASSERT_TRUE(r) << err;
	EXPECT_EQ(r->master.port, 7000);
	ASSERT_EQ(r->replicas.size(), 1u);
	EXPECT_EQ(r->replicas[0].port, 7003);
	EXPECT_FALSE(SlotRangeFromReply(0, 16384, {"h"}, {1}, &err));
	EXPECT_FALSE(SlotRangeFromReply(0, 1, {}, {}, &err));
	EXPECT_FALSE(SlotRangeFromReply(0, 1, {"h"}, {70000}, &err));
}

TEST(ClusterUrl, SeedNodes)
{
	std::string err;
	auto u = ParseRedisUrl("redis-cluster://relay:s%40cret@10.0.0.1:7000,10.0.0.2,[::1]:7002", &err);
	ASSERT_TRUE(u) << err;
	ASSERT_TRUE(u->IsCluster());
	EXPECT_FALSE(u->IsSentinel());
	ASSERT_EQ(u->cluster_nodes.size(), 3u);
	EXPECT_EQ(u->cluster_nodes[0].host, "10.0.0.1");
	EXPECT_EQ(u->cluster_nodes[0].port, 7000);
	EXPECT_EQ(u->cluster_nodes[1].port, 6379);
	EXPECT_EQ(u->cluster_nodes[2].host, "::1");
	EXPECT_EQ(u->username, "relay");
	EXPECT_EQ(u->password, "s@cret");
	EXPECT_EQ(u->Redacted(), "redis-cluster://relay:***@10.0.0.1:7000,10.0.0.2:6379,[::1]:7002");
	EXPECT_TRUE(ParseRedisUrl("redis-cluster://h:1/", &err));
	EXPECT_TRUE(ParseRedisUrl("redis-cluster://h:1?db=0", &err));
	EXPECT_FALSE(ParseRedisUrl("redis-cluster://h:1/2", &err));
	EXPECT_NE(err.find("database 0 only"), std::string::npos);
	EXPECT_FALSE(ParseRedisUrl("redis-cluster://h:1?db=3", &err));
	EXPECT_FALSE(ParseRedisUrl("redis-cluster://h:1,,h:2", &err));
	EXPECT_FALSE(ParseRedisUrl("redis-cluster://h:99999", &err));
}

// rediss-cluster:// is the TLS form: every node (seeds and the masters CLUSTER SLOTS names) is reached
// over TLS with the URL's options; a node's certificate is checked against its announced address, or sni.
TEST(ClusterUrl, TlsReachesEveryNode)
{
	std::string err;
	auto u = ParseRedisUrl("rediss-cluster://app:pw@10.0.0.1:7000,10.0.0.2:7001?cacert=/ca.pem&cert=/c.pem&key=/k.pem", &err);
	ASSERT_TRUE(u) << err;
	ASSERT_TRUE(u->IsCluster());
	EXPECT_TRUE(u->tls.enabled);
	EXPECT_EQ(u->tls.cacert, "/ca.pem");
	EXPECT_EQ(u->Redacted(), "rediss-cluster://app:***@10.0.0.1:7000,10.0.0.2:7001?cacert=/ca.pem&cert=/c.pem&key=/k.pem");
	RedisUrl node = AtNode(*u, {"10.0.0.9", 7005}); // a master found in CLUSTER SLOTS, not a seed
	EXPECT_TRUE(node.tls.enabled);
	EXPECT_EQ(node.host, "10.0.0.9");
	EXPECT_EQ(node.tls.cacert, "/ca.pem");
	EXPECT_EQ(node.tls.key, "/k.pem");
	EXPECT_TRUE(node.tls.sni.empty()); // verified as 10.0.0.9 (an IP SAN)
	EXPECT_EQ(node.password, "pw");
	EXPECT_FALSE(node.IsCluster());

	u = ParseRedisUrl("rediss-cluster://h:7000?sni=redis.internal&insecure=1", &err);
	ASSERT_TRUE(u) << err;
	EXPECT_EQ(AtNode(*u, {"10.0.0.9", 7005}).tls.sni, "redis.internal"); // one shared name for every node
	EXPECT_TRUE(u->tls.insecure);
	EXPECT_EQ(u->Redacted(), "rediss-cluster://h:7000?sni=redis.internal&insecure=1");
	EXPECT_NE(InsecureWarning({*u}).find("insecure=1"), std::string::npos);

	EXPECT_TRUE(ParseRedisUrl("rediss-cluster://h:7000", &err)); // the system's CA store
	EXPECT_FALSE(ParseRedisUrl("rediss-cluster://h:7000/1", &err));
	EXPECT_NE(err.find("database 0 only"), std::string::npos);
	EXPECT_FALSE(ParseRedisUrl("rediss-cluster://h:7000?cert=/c.pem", &err));
	EXPECT_NE(err.find("cert and key go together"), std::string::npos);
	EXPECT_FALSE(ParseRedisUrl("rediss-cluster://h:7000?cacert=", &err));
	EXPECT_FALSE(ParseRedisUrl("redis-cluster://h:7000?cacert=/ca.pem", &err)); // plaintext takes no TLS options
	EXPECT_NE(err.find("rediss-cluster://"), std::string::npos);
	EXPECT_FALSE(ParseRedisUrl("redis-cluster://h:7000", &err)->tls.enabled);
}

TEST(ClusterUrl, AloneNotInAShardList)
{
	std::string err;
	auto one = ParseShardList("redis-cluster://h:7000,h:7001", &err);
	ASSERT_TRUE(one) << err;
	EXPECT_EQ(one->size(), 1u);
	EXPECT_FALSE(ParseShardList("redis-cluster://h:7000 redis://h:6379", &err));
	EXPECT_NE(err.find("alone"), std::string::npos);
	ASSERT_TRUE(ParseShardList("rediss-cluster://h:7000?cacert=/ca.pem", &err)) << err;
	EXPECT_FALSE(ParseShardList("rediss-cluster://h:7000 rediss://h:6379", &err));
	EXPECT_NE(err.find("alone"), std::string::npos);
}
