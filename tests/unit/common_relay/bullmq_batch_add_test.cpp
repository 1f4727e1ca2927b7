// tests/unit/common_relay/bullmq_batch_add_test.cpp - the batch-add request: keys, arguments, the script.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "common/bullmq/lua_prelude.hpp"
#include "common/relay/bullmq_batch_add.hpp"
#include "common/relay/error.hpp"

using namespace chat_outbox;

TEST(BatchAdd, Request)
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
}

TEST(BatchAdd, RefusesNamesBullmqCannotUse)
{
	JobSpec job{"id-a", "message.created", "{}"};
	for (auto [prefix, queue] : {std::pair{"bull", "a:b"}, std::pair{"a:b", "q"}, std::pair{"", "q"}}) {
		std::string out, state;
		try {
			EncodeBatchAdd(prefix, queue, &job, 1, 1, "", &out);
		} catch (const Error &e) {
			state = e.SqlState();
		}
		EXPECT_EQ(state, "22023") << prefix << " " << queue;
		EXPECT_EQ(out, "") << "nothing is encoded";
	}
}

TEST(BatchAdd, ScriptStartsWithTheSharedPrelude)
{
	EXPECT_EQ(BatchAddScript().rfind(bullmq::kLuaPrelude, 0), 0u);
}
