// tests/unit/consumer/bullmq_identity_test.cpp - lock tokens, identity rules and the CLIENT LIST clash check.
#include <gtest/gtest.h>

#include "consumer/core/bullmq_identity.hpp"
#include "consumer/core/job_message.hpp"

using namespace chat_outboxd;

TEST(BullmqIdentity, UuidsAreV4AndDistinct)
{
	std::string a = NewUuid(), b = NewUuid();
	EXPECT_TRUE(IsUuid(a));
	EXPECT_NE(a, b);
	EXPECT_EQ(a[14], '4');
	EXPECT_NE(std::string("89ab").find(a[19]), std::string::npos);
}

TEST(BullmqIdentity, ValidIdentity)
{
	std::string err;
	EXPECT_TRUE(ValidIdentity("workers@host-1", &err));
	EXPECT_FALSE(ValidIdentity("", &err));
	EXPECT_FALSE(ValidIdentity("a:b", &err));
	EXPECT_FALSE(ValidIdentity("a b", &err));
}

TEST(BullmqIdentity, ClashOnlyForTheLaterClient)
{
	std::string text = "id=3 addr=127.0.0.1:1 laddr=x fd=8 name=chat-outboxd:bull:q:w age=1\n"
	                   "id=7 addr=127.0.0.1:2 laddr=x fd=9 name=chat-outboxd:bull:q:w age=0\n"
	                   "id=8 addr=127.0.0.1:3 laddr=x fd=9 name=chat-outboxd:bull:q:w:blocking age=0\n"
	                   "id=9 addr=127.0.0.1:4 laddr=x fd=9 name= age=0\n";
	auto clients = ParseClientList(text);
	ASSERT_EQ(clients.size(), 4u);
	std::string name = ConnectionName("bull", "q", "w");
	int64_t other = 0;
	EXPECT_TRUE(IdentityClash(clients, name, 7, &other));
	EXPECT_EQ(other, 3);
	EXPECT_FALSE(IdentityClash(clients, name, 3, &other));
	EXPECT_FALSE(IdentityClash(clients, ConnectionName("bull", "q", "other"), 10, &other));
}
