// tests/unit/gateway/member_chats_test.cpp - a user's chats held within --max-member-chats
// (daemon/src/gateway/auth/core/member_chats.hpp) and what a connect of a user over it gets (MemberRooms).
#include <gtest/gtest.h>

#include "gateway/auth/core/gateway_auth.hpp"
#include "gateway/auth/core/member_chats.hpp"

using namespace chat_outboxd;

using Chats = std::vector<int64_t>;

TEST(MemberChats, ReadKeepsTheFirstByIdAndSaysWhetherCut)
{
	MemberChats all = MemberChats::Read({30, 10, 20}, 3);
	EXPECT_EQ(all.chats, (Chats{10, 20, 30}));
	EXPECT_FALSE(all.Cut());
	MemberChats cut = MemberChats::Read({40, 30, 10, 20}, 3); // a read asks for bound + 1
	EXPECT_EQ(cut.chats, (Chats{10, 20, 30}));
	EXPECT_TRUE(cut.Cut());
	EXPECT_EQ(MemberChats::Read({}, 3).chats, Chats{});
}

TEST(MemberChats, HasAsksTheDatabaseOnlyPastACutList)
{
	MemberChats all = MemberChats::Read({1, 2}, 3);
	EXPECT_EQ(all.Has(1), MemberChats::Verdict::Yes);
	EXPECT_EQ(all.Has(9), MemberChats::Verdict::No);
	MemberChats cut = MemberChats::Read({1, 2, 3, 4}, 3);
	EXPECT_EQ(cut.Has(3), MemberChats::Verdict::Yes);
	EXPECT_EQ(cut.Has(4), MemberChats::Verdict::Ask);
	EXPECT_EQ(cut.Has(0), MemberChats::Verdict::Ask); // a cut list that lost one is not the first any more
}

TEST(MemberChats, AddKeepsTheBound)
{
	MemberChats m = MemberChats::Read({10, 20}, 3);
	EXPECT_TRUE(m.Add(30, 3));
	EXPECT_FALSE(m.Cut());
	EXPECT_TRUE(m.Add(30, 3)); // twice: once
	EXPECT_EQ(m.chats, (Chats{10, 20, 30}));
	EXPECT_FALSE(m.Add(40, 3)); // past the first three: cut, not held
	EXPECT_TRUE(m.Cut());
	EXPECT_EQ(m.chats, (Chats{10, 20, 30}));
	EXPECT_TRUE(m.Add(5, 3)); // before the last: pushes it out
	EXPECT_EQ(m.chats, (Chats{5, 10, 20}));
	EXPECT_FALSE(m.Add(25, 3)); // past the last of a cut list
	EXPECT_EQ(m.chats.size(), 3u);
}

TEST(MemberChats, RemoveSaysWhetherItWasListed)
{
	MemberChats m = MemberChats::Read({1, 2, 3, 4}, 3);
	EXPECT_FALSE(m.Remove(4));
	EXPECT_TRUE(m.Remove(2));
	EXPECT_EQ(m.chats, (Chats{1, 3}));
	EXPECT_TRUE(m.Cut()); // the caller reads it again
}

TEST(MemberChats, GoneIsWhatTheReadNoLongerFound)
{
	// held 1..5 and 9 (joined past the list); the read: first {1,3,4,6} (6 added, bound 3 + 1), still {9}
	EXPECT_EQ(Gone({1, 2, 3, 4, 5, 9}, {1, 3, 4, 6}, {9}), (Chats{2, 5}));
	// a chat only pushed past the first (5: still found by the check) is not gone
	EXPECT_EQ(Gone({1, 5}, {0, 1}, {5}), Chats{});
	EXPECT_EQ(Gone({}, {1}, {}), Chats{});
}

TEST(MemberChats, ACutListConnectsWithItsFirstAndRefusesARequestPastIt)
{
	AuthResult r;
	r.has_chats = false;
	MemberRooms(&r, MemberChats::Read({1, 2, 3, 4}, 3), std::nullopt);
	EXPECT_TRUE(r.ok);
	EXPECT_TRUE(r.chats_cut);
	EXPECT_EQ(r.allowed, (Chats{1, 2, 3}));
	EXPECT_EQ(r.rooms, (Chats{1, 2, 3}));

	AuthResult within;
	within.has_chats = false;
	MemberRooms(&within, MemberChats::Read({1, 2, 3}, 3), std::nullopt);
	EXPECT_FALSE(within.chats_cut);

	AuthResult past;
	past.has_chats = false;
	MemberRooms(&past, MemberChats::Read({1, 2, 3, 4}, 3), Chats{2, 4});
	EXPECT_FALSE(past.ok);
	EXPECT_EQ(past.message, "forbidden");
	EXPECT_EQ(past.reason, "chat 4 is not among the first 3 chats of this user (--max-member-chats): join it once connected");
}
