// tests/unit/common_relay/job_id_test.cpp - the job id the relay gives an outbox row.
#include <gtest/gtest.h>

#include <string>

#include "common/bullmq/queue_keys.hpp"
#include "common/relay/job_id.hpp"

using namespace chat_outbox;

TEST(JobId, PayloadIdWhenValid)
{
	EXPECT_TRUE(ChooseJobId("5b0e6c1c-3f7a-4d8e-9a51-0c2f1e7d9b42", "consumers", 7) ==
	            "5b0e6c1c-3f7a-4d8e-9a51-0c2f1e7d9b42");
	EXPECT_TRUE(ChooseJobId(nullptr, "consumers", 7) == "outbox-consumers-7");
	EXPECT_TRUE(ChooseJobId("123", "workers", 9) == "outbox-workers-9");
}

TEST(JobId, NeverAQueueKeyName)
{
	for (std::string_view name : bullmq::QueueKeyNames())
		EXPECT_TRUE(ChooseJobId(std::string(name).c_str(), "consumers", 3) == "outbox-consumers-3") << name;
}
