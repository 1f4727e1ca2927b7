// tests/unit/gateway/user_index_test.cpp - the sockets of each user (gateway/hub/core/user_index.hpp): a
// user's members are exactly those added and not removed, removing the last one says so and forgets
// the user, and many users coming and going leave nothing behind.
#include <gtest/gtest.h>

#include <string>

#include "gateway/hub/core/user_index.hpp"

using namespace chat_outboxd;

namespace {
struct Sock {
	int id;
};
} // namespace

TEST(UserIndex, ListsEachUsersMembers)
{
	UserIndex<Sock> idx;
	Sock a{1}, b{2}, c{3};
	idx.Add("mia", &a);
	idx.Add("mia", &b);
	idx.Add("max", &c);
	idx.Add("mia", &a); // twice is once
	ASSERT_NE(idx.Of("mia"), nullptr);
	EXPECT_EQ(idx.Of("mia")->size(), 2u);
	ASSERT_NE(idx.Of("max"), nullptr);
	EXPECT_EQ(idx.Of("max")->front(), &c);
	EXPECT_EQ(idx.Of("sam"), nullptr);
	EXPECT_EQ(idx.Users(), 2u);
}

TEST(UserIndex, TheLastRemovalForgetsTheUser)
{
	UserIndex<Sock> idx;
	Sock a{1}, b{2};
	idx.Add("mia", &a);
	idx.Add("mia", &b);
	EXPECT_FALSE(idx.Remove("mia", &a)); // b is still there
	ASSERT_NE(idx.Of("mia"), nullptr);
	EXPECT_EQ(*idx.Of("mia"), UserIndex<Sock>::List{&b});
	EXPECT_FALSE(idx.Remove("mia", &a)); // not there any more
	EXPECT_FALSE(idx.Remove("max", &a)); // never there
	EXPECT_TRUE(idx.Remove("mia", &b));
	EXPECT_EQ(idx.Of("mia"), nullptr);
	EXPECT_EQ(idx.Users(), 0u);
	EXPECT_FALSE(idx.Remove("mia", &b));
}

TEST(UserIndex, ManyUsersComingAndGoingLeaveNothing)
{
	UserIndex<Sock> idx;
	std::vector<Sock> socks(3000);
	for (size_t i = 0; i < socks.size(); i++)
		idx.Add("u" + std::to_string(i % 1000), &socks[i]);
	EXPECT_EQ(idx.Users(), 1000u);
	size_t last = 0;
	for (size_t i = 0; i < socks.size(); i++)
		last += idx.Remove("u" + std::to_string(i % 1000), &socks[i]);
	EXPECT_EQ(last, 1000u); // each user's third socket was its last
	EXPECT_EQ(idx.Users(), 0u);
}
