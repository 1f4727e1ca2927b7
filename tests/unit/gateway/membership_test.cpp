// tests/unit/gateway/membership_test.cpp - the pure parts of --authz membership: the NOTIFY payloads of
// chat_outbox_members (sql/parts/members.sql), tokens without a chats claim, and how the membership,
// a chats claim and the requested chats make a connection's chats (MemberRooms).
#include <gtest/gtest.h>

#include "gateway/auth/core/gateway_auth.hpp"
#include "gateway/auth/core/jwt.hpp"
#include "gateway/auth/core/member_change.hpp"

using namespace chat_outboxd;

TEST(MemberChange, ReadsTheTriggersPayloads)
{
	MemberChange c;
	ASSERT_TRUE(ParseMemberChange("+42 alice", &c));
	EXPECT_EQ(c.kind, MemberChange::Kind::Added);
	EXPECT_EQ(c.chat, 42);
	EXPECT_EQ(c.user, "alice");
	ASSERT_TRUE(ParseMemberChange("-7 bob smith", &c)); // a user id may hold spaces
	EXPECT_EQ(c.kind, MemberChange::Kind::Removed);
	EXPECT_EQ(c.chat, 7);
	EXPECT_EQ(c.user, "bob smith");
	ASSERT_TRUE(ParseMemberChange("*", &c));
	EXPECT_EQ(c.kind, MemberChange::Kind::All);
}

TEST(MemberChange, RefusesAnythingElse)
{
	MemberChange c;
	for (const std::string &bad : std::vector<std::string>{"", "+", "+42", "+42 ", "42 alice", "?42 alice", "+x alice", "--7 a" /* a chat id clients cannot name (JsonInteger) */, "+99999999999999999999 a",
	                                                       std::string("+1 a\x01", 5), "+1 " + std::string(201, 'x')})
		EXPECT_FALSE(ParseMemberChange(bad, &c)) << bad;
}

TEST(MemberRooms, MembershipNarrowedByTheClaimAndTheRequest)
{
	AuthResult r;
	r.has_chats = false;
	MemberRooms(&r, MemberChats{{1, 2, 3}}, std::nullopt);
	EXPECT_TRUE(r.ok);
	EXPECT_EQ(r.allowed, (std::vector<int64_t>{1, 2, 3}));
	EXPECT_EQ(r.rooms, r.allowed);

	AuthResult claim;
	claim.allowed = {2, 3, 9};
	MemberRooms(&claim, MemberChats{{1, 2, 3}}, std::vector<int64_t>{3});
	EXPECT_TRUE(claim.ok);
	EXPECT_EQ(claim.allowed, (std::vector<int64_t>{2, 3}));
	EXPECT_EQ(claim.token_chats, (std::vector<int64_t>{2, 3, 9}));
	EXPECT_EQ(claim.rooms, (std::vector<int64_t>{3}));

	AuthResult outside;
	outside.has_chats = false;
	MemberRooms(&outside, MemberChats{{1}}, std::vector<int64_t>{1, 5});
	EXPECT_FALSE(outside.ok);
	EXPECT_EQ(outside.message, "forbidden");
	EXPECT_EQ(outside.reason, "chat 5 is not a chat of this user");
}

TEST(MemberTokens, NeedSubNotChats)
{
	const int64_t now = 1700000000;
	jwt::Policy membership{"s3cret", {}, {}, true};
	auto verdict = [&](const std::string &payload, const jwt::Policy &policy) {
		jwt::Claims c;
		std::string reason;
		return jwt::Verify(jwt::Sign(payload, "s3cret"), policy, now, &c, &reason) ? std::string(c.has_chats ? "ok, chats" : "ok") : reason;
	};
	EXPECT_EQ(verdict(R"({"exp":1700000100,"sub":"u"})", membership), "ok");
	EXPECT_EQ(verdict(R"({"exp":1700000100,"sub":"u","chats":[1]})", membership), "ok, chats");
	EXPECT_EQ(verdict(R"({"exp":1700000100,"sub":"u","chats":"1"})", membership), "bad chats");
	EXPECT_EQ(verdict(R"({"exp":1700000100})", membership), "sub missing");
	EXPECT_EQ(verdict(R"({"exp":1700000100,"sub":""})", membership), "bad sub");
	EXPECT_EQ(verdict(R"({"exp":1700000100,"sub":"a\u0000b"})", membership), "bad sub");
	EXPECT_EQ(verdict(R"({"exp":1700000100,"sub":7})", membership), "bad sub");
	EXPECT_EQ(verdict(R"({"exp":1700000100,"sub":")" + std::string(201, 'x') + "\"}", membership), "bad sub");
	EXPECT_EQ(verdict(R"({"exp":1700000100,"sub":"u"})", jwt::Policy{"s3cret"}), "chats missing"); // token mode
}

TEST(MemberTokens, RequestedChatsWaitForTheMembership)
{
	// a token without a chats claim: the requested chats are checked against the membership, not the token
	const int64_t now = 1700000000;
	jwt::Policy membership{"s3cret", {}, {}, true};
	const std::string token = jwt::Sign(R"({"exp":1700000100,"sub":"u"})", "s3cret");
	AuthResult r = Authorize(token, membership, now, std::vector<int64_t>{2});
	ASSERT_TRUE(r.ok) << r.reason;
	MemberRooms(&r, MemberChats{{1, 2}}, std::vector<int64_t>{2});
	EXPECT_TRUE(r.ok);
	EXPECT_EQ(r.rooms, std::vector<int64_t>{2});
	AuthResult outside = Authorize(token, membership, now, std::vector<int64_t>{5});
	ASSERT_TRUE(outside.ok);
	MemberRooms(&outside, MemberChats{{1, 2}}, std::vector<int64_t>{5});
	EXPECT_FALSE(outside.ok);
	EXPECT_EQ(outside.reason, "chat 5 is not a chat of this user");
	// with a chats claim, a requested chat outside the claim is refused by the token at once
	AuthResult claimed = Authorize(jwt::Sign(R"({"exp":1700000100,"sub":"u","chats":[1]})", "s3cret"), membership, now,
	                               std::vector<int64_t>{2});
	EXPECT_FALSE(claimed.ok);
	EXPECT_EQ(claimed.reason, "chat 2 is not in the token");
}
