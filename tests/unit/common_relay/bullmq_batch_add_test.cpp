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
	EncodeBatchAdd("bull", "chat-messages", LayoutCheck{"chat-messages"}, MarkStep{}, jobs, 2, 1700000000000, "abc123", &out);
	// EVALSHA sha numkeys(11 fixed + layout + mark + 2 jobs) keys... ts, layout expectation, mark expectation, new
	// mark, then 4 args per job
	EXPECT_TRUE(out.rfind("*30\r\n$7\r\nEVALSHA\r\n$6\r\nabc123\r\n$2\r\n15\r\n", 0) == 0);
	EXPECT_TRUE(out.find("$23\r\nbull:chat-messages:wait\r\n") != std::string::npos);
	EXPECT_TRUE(out.find("$23\r\nbull:chat-messages:id-b\r\n") != std::string::npos);
	EXPECT_TRUE(out.find("{\"jobId\":\"id-a\",\"attempts\":0}") != std::string::npos);
	// the timestamp, then an empty layout expectation (no check), any mark and none written, then the first job's id
	EXPECT_TRUE(out.find("$13\r\n1700000000000\r\n$0\r\n\r\n$1\r\n*\r\n$0\r\n\r\n$4\r\nid-a\r\n") !=
	            std::string::npos);
	out.clear();
	EncodeBatchAdd("bull", "q", LayoutCheck{"q"}, MarkStep{}, jobs, 1, 1, "", &out);
	EXPECT_TRUE(out.rfind("*25\r\n$4\r\nEVAL\r\n", 0) == 0);
	EXPECT_TRUE(out.find(BatchAddScript()) != std::string::npos);
}

// The layout key follows paused, then the mark's, before the job hashes: the service's layout key,
// whichever partition's queue the call adds to (a partition queue has no layout key of its own), and
// the partition queue's own mark.
TEST(BatchAdd, LayoutKeyAfterTheFixedKeys)
{
	JobSpec job{"id-a", "message.created", "{}"};
	std::string out;
	EncodeBatchAdd("bull", "chats-p3", LayoutCheck{"chats"}, MarkStep{}, &job, 1, 1, "abc", &out);
	EXPECT_TRUE(out.find("$20\r\nbull:chats-p3:paused\r\n$21\r\nbull:chats:partitions\r\n$24\r\nbull:chats-p3:relay-mark\r\n"
	                     "$18\r\nbull:chats-p3:id-a\r\n") != std::string::npos)
	    << out;
	EXPECT_EQ(out.find("bull:chats-p3:partitions"), std::string::npos);
}

// The expectation as the script reads it (ARGV[2]): the raw value after '=', or 'absent'.
TEST(BatchAdd, LayoutExpectation)
{
	JobSpec job{"id-a", "message.created", "{}"};
	auto expectation = [&](LayoutCheck check) {
		std::string out;
		EncodeBatchAdd("bull", "q", check, MarkStep{}, &job, 1, 7, "abc", &out);
		size_t at = out.find("$1\r\n7\r\n");
		EXPECT_NE(at, std::string::npos);
		size_t len_end = out.find("\r\n", at + 7); // the next argument: $<length>\r\n<bytes>
		size_t len = std::stoul(out.substr(at + 8, len_end - at - 8));
		return out.substr(len_end + 2, len);
	};
	EXPECT_EQ(expectation(LayoutCheck{"q"}), "");
	EXPECT_EQ(expectation(LayoutCheck{"q", LayoutExpect::kAbsent}), "absent");
	EXPECT_EQ(expectation(LayoutCheck{"q", LayoutExpect::kHolds, "4"}), "=4");
	// a value is passed as it was read, not as a count: "04" is not "4"
	EXPECT_EQ(expectation(LayoutCheck{"q", LayoutExpect::kHolds, "04"}), "=04");
	EXPECT_EQ(expectation(LayoutCheck{"q", LayoutExpect::kHolds, ""}), "=");
}

TEST(BatchAdd, LayoutChangedError)
{
	std::string value;
	EXPECT_TRUE(IsLayoutChanged("CHATOUTBOX_LAYOUT 4", &value));
	EXPECT_EQ(value, "4");
	EXPECT_TRUE(IsLayoutChanged("CHATOUTBOX_LAYOUT nil", &value));
	EXPECT_EQ(value, "nil");
	EXPECT_FALSE(IsLayoutChanged("BADQUEUE queue key bull:q:wait holds a string, not a list", &value));
	EXPECT_FALSE(IsLayoutChanged("NOSCRIPT No matching script", &value));
	EXPECT_FALSE(IsLayoutChanged("CHATOUTBOX_LAYOUTX", &value));
	// the script answers with the prefix this recognises
	EXPECT_NE(BatchAddScript().find("error_reply('CHATOUTBOX_LAYOUT ' .."), std::string::npos);
}

TEST(BatchAdd, RefusesNamesBullmqCannotUse)
{
	JobSpec job{"id-a", "message.created", "{}"};
	for (auto [prefix, queue] : {std::pair{"bull", "a:b"}, std::pair{"a:b", "q"}, std::pair{"", "q"}}) {
		std::string out, state;
		try {
			EncodeBatchAdd(prefix, queue, LayoutCheck{queue}, MarkStep{}, &job, 1, 1, "", &out);
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

// On a cluster (queues in their "{...}" form) a call in another slot than the service's layout key
// names its own queue's key and checks nothing: one script's keys must share a slot there. The
// unpartitioned queue, in the key's slot, checks it.
TEST(BatchAdd, ClusterCallKeysInOneSlot)
{
	JobSpec job{"id-a", "message.created", "{}"};
	std::string out;
	EncodeBatchAdd("bull", "{chats-p3}", LayoutCheck{"{chats}", LayoutExpect::kHolds, "4"}, MarkStep{}, &job, 1, 1, "abc", &out);
	EXPECT_EQ(out.find("=4"), std::string::npos) << out;
	EXPECT_NE(out.find("bull:{chats-p3}:partitions"), std::string::npos) << out;
	EXPECT_EQ(out.find("bull:{chats}:partitions"), std::string::npos) << out;
	out.clear();
	EncodeBatchAdd("bull", "{chats}", LayoutCheck{"{chats}", LayoutExpect::kAbsent}, MarkStep{}, &job, 1, 1, "abc", &out);
	EXPECT_NE(out.find("bull:{chats}:partitions"), std::string::npos) << out;
}

// The mark's step as the script reads it (ARGV[3], ARGV[4]): what the key must hold ("*": anything, "":
// no mark) and what the call writes ("": nothing); its key is the queue's, in the queue's slot.
TEST(BatchAdd, MarkStep)
{
	JobSpec job{"id-a", "message.created", "{}"};
	std::string out;
	EncodeBatchAdd("bull", "q", LayoutCheck{"q"}, MarkStep{"", "{\"made\": \"m\"}"}, &job, 1, 7, "abc", &out);
	EXPECT_NE(out.find("$1\r\n7\r\n$0\r\n\r\n$0\r\n\r\n$13\r\n{\"made\": \"m\"}\r\n$4\r\nid-a\r\n"), std::string::npos) << out;
	out.clear();
	EncodeBatchAdd("bull", "{chats-p3}", LayoutCheck{"{chats}"}, MarkStep{"old", "new"}, &job, 1, 7, "abc", &out);
	EXPECT_NE(out.find("$26\r\nbull:{chats-p3}:relay-mark\r\n"), std::string::npos) << out;
	EXPECT_NE(out.find("$3\r\nold\r\n$3\r\nnew\r\n"), std::string::npos) << out;
	EXPECT_EQ(MarkKey("bull", "{chats-p3}"), "bull:{chats-p3}:relay-mark");
}

TEST(BatchAdd, MarkChangedError)
{
	std::string what;
	EXPECT_TRUE(IsMarkChanged("CHATOUTBOX_MARK the mark under bull:q:relay-mark is not the one the relay committed last", &what));
	EXPECT_EQ(what, "the mark under bull:q:relay-mark is not the one the relay committed last");
	EXPECT_FALSE(IsMarkChanged("CHATOUTBOX_LAYOUT 4", &what));
	EXPECT_FALSE(IsMarkChanged("NOSCRIPT No matching script", &what));
	// the script answers with the prefix this recognises, before its first write
	const std::string &script = BatchAddScript();
	const size_t refusal = script.find("return redis.error_reply('CHATOUTBOX_MARK ");
	ASSERT_NE(refusal, std::string::npos);
	EXPECT_LT(refusal, script.find("rcall('HSET', KEYS[k]"));
}
