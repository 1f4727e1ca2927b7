// tests/unit/extension/extension_core_test.cpp - the extension's pure C++ core (extension/src/core), without
// Postgres or Redis: the same sources the .so compiles, built here as a plain library.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "bullmq/queue_keys.hpp"
#include "core/bullmq_batch_add.hpp"
#include "core/error.hpp"
#include "core/job_id.hpp"
#include "core/relay_health.hpp"
#include "core/resp.hpp"
#include "redis_safety.hpp"

using namespace chat_outbox;

TEST(ExtensionCore, JobIds)
{
	using bullmq::IsValidJobId;
	EXPECT_TRUE(IsValidJobId("5b0e6c1c-3f7a-4d8e-9a51-0c2f1e7d9b42"));
	EXPECT_TRUE(IsValidJobId("outbox-consumers-7"));
	EXPECT_TRUE(!IsValidJobId(""));
	EXPECT_TRUE(!IsValidJobId("0"));
	EXPECT_TRUE(!IsValidJobId("42"));
	EXPECT_TRUE(!IsValidJobId("-42"));
	EXPECT_TRUE(!IsValidJobId("0:abc"));
	EXPECT_TRUE(!IsValidJobId("a:b"));
	EXPECT_TRUE(!IsValidJobId("has space"));
	EXPECT_TRUE(!IsValidJobId("quote\""));
	EXPECT_TRUE(!IsValidJobId(std::string(201, 'a')));
	EXPECT_TRUE(IsValidJobId("Wait") && IsValidJobId("taken-1") && IsValidJobId("a_b"));
	// no id may name one of the queue's own keys: every name BullMQ uses, and anything of that shape
	for (std::string_view name : bullmq::QueueKeyNames()) {
		EXPECT_TRUE(bullmq::MayNameQueueKey(name) && bullmq::IsQueueKeyName(name)) << name;
		EXPECT_TRUE(!IsValidJobId(name)) << name;
		EXPECT_TRUE(ChooseJobId(std::string(name).c_str(), "consumers", 3) == "outbox-consumers-3") << name;
	}
	for (const char *name : {"wait", "paused", "meta", "events", "marker", "active", "id", "delayed", "prioritized",
							 "completed", "failed", "stalled", "stalled-check", "limiter", "pc", "repeat", "de",
							 "metrics", "waiting-children", "waiting", "priority", "delay", "dn"})
		EXPECT_TRUE(std::find(bullmq::QueueKeyNames().begin(), bullmq::QueueKeyNames().end(), name) !=
					bullmq::QueueKeyNames().end())
			<< name;
	EXPECT_TRUE(!IsValidJobId("some-future-key") && !IsValidJobId("-"));
	EXPECT_TRUE(!bullmq::MayNameQueueKey("outbox-consumers-3"));
	EXPECT_TRUE(!bullmq::IsQueueKeyName("bad-json") && !bullmq::IsQueueKeyName("waits"));
	EXPECT_TRUE(ChooseJobId("5b0e6c1c-3f7a-4d8e-9a51-0c2f1e7d9b42", "consumers", 7) == "5b0e6c1c-3f7a-4d8e-9a51-0c2f1e7d9b42");
	EXPECT_TRUE(ChooseJobId(nullptr, "consumers", 7) == "outbox-consumers-7");
	EXPECT_TRUE(ChooseJobId("123", "workers", 9) == "outbox-workers-9");
}

TEST(ExtensionCore, Resp)
{
	std::string out;
	RespCommand(&out, 3).Arg("SET").Arg("k").Arg(std::string("a\r\nb"));
	EXPECT_TRUE(out == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n");
	out.clear();
	RespCommand(&out, 2).Arg("SELECT").Arg(12LL);
	EXPECT_TRUE(out == "*2\r\n$6\r\nSELECT\r\n$2\r\n12\r\n");
}

TEST(ExtensionCore, BatchAdd)
{
	JobSpec jobs[2] = {{"id-a", "message.created", "{\"id\":\"id-a\"}"}, {"id-b", "message.created", "{}"}};
	std::string out;
	EncodeBatchAdd("bull", "chat-messages", jobs, 2, 1700000000000, "abc123", &out);
	// EVALSHA sha numkeys(11 fixed + 2 jobs) keys... ts then 4 args per job
	EXPECT_TRUE(out.rfind("*25\r\n$7\r\nEVALSHA\r\n$6\r\nabc123\r\n$2\r\n13\r\n", 0) == 0);
	EXPECT_TRUE(out.find("$23\r\nbull:chat-messages:wait\r\n") != std::string::npos);
	EXPECT_TRUE(out.find("$23\r\nbull:chat-messages:id-b\r\n") != std::string::npos);
	EXPECT_TRUE(out.find("{\"jobId\":\"id-a\",\"attempts\":0}") != std::string::npos);
	EXPECT_TRUE(out.find("$13\r\n1700000000000\r\n") != std::string::npos);
	out.clear();
	EncodeBatchAdd("bull", "q", jobs, 1, 1, "", &out);
	EXPECT_TRUE(out.rfind("*20\r\n$4\r\nEVAL\r\n", 0) == 0);
	EXPECT_TRUE(out.find(BatchAddScript()) != std::string::npos);
	bool threw = false;
	try {
		EncodeBatchAdd("bull", "a:b", jobs, 1, 1, "", &out);
	} catch (const Error &e) {
		threw = std::string(e.SqlState()) == "22023";
	}
	EXPECT_TRUE(threw);
	EXPECT_TRUE(bullmq::QueueKey("{bull}", "q", "marker") == "{bull}:q:marker");
}

TEST(ExtensionCore, Health)
{
	RelayHealth h;
	bool log_it;
	int64_t total;
	EXPECT_TRUE(h.OnFailure(&log_it) == 50 && log_it); // outage starts: log once
	EXPECT_TRUE(h.OnFailure(&log_it) == 100 && !log_it);
	for (int i = 0; i < 10; i++)
		h.OnFailure(&log_it);
	EXPECT_TRUE(h.OnFailure(&log_it) == 5000 && !log_it); // capped
	h.OnSuccess(500, false, &log_it, &total);	  // back, still draining: quiet
	EXPECT_TRUE(!log_it && !h.Failing() && h.Recovering());
	h.OnSuccess(120, true, &log_it, &total); // drained: "redis back, relayed 620"
	EXPECT_TRUE(log_it && total == 620 && !h.Recovering());
	h.OnSuccess(3, true, &log_it, &total);
	EXPECT_TRUE(!log_it);
	EXPECT_TRUE(h.OnFailure(&log_it) == 50 && log_it); // a new outage logs again
	EXPECT_TRUE(MoreToDrain(500, 500) && !MoreToDrain(499, 500));
	EXPECT_TRUE(RedisSafetyWarning("yes", "noeviction").empty());
	EXPECT_TRUE(RedisSafetyWarning("", "").empty()); // CONFIG denied: no guess
	EXPECT_TRUE(RedisSafetyWarning("no", "noeviction").find("appendonly") != std::string::npos);
	EXPECT_TRUE(RedisSafetyWarning("yes", "allkeys-lru").find("maxmemory-policy") != std::string::npos);
	EXPECT_TRUE(RedisSafetyWarning(RedisDurability{"yes", "everysec", "noeviction"}).empty());
	EXPECT_TRUE(RedisSafetyWarning(RedisDurability{"yes", "always", "noeviction"}).empty());
	EXPECT_TRUE(RedisSafetyWarning(RedisDurability{"yes", "", "noeviction"}).empty()); // unread: no guess
	EXPECT_TRUE(RedisSafetyWarning(RedisDurability{"yes", "no", "noeviction"}).find("appendfsync is \"no\"") !=
				std::string::npos);
	// without AOF, fsync does not matter: one sentence about appendonly
	EXPECT_TRUE(RedisSafetyWarning(RedisDurability{"no", "no", "noeviction"}).find("appendfsync") == std::string::npos);
}
