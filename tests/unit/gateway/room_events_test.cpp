// tests/unit/gateway/room_events_test.cpp - what a gateway passes on of a chat's presence and typing
// (daemon/src/gateway/conversation/core/room_events.hpp): a small chat's changes at once up to a burst, a big
// chat's coalesced into one bounded frame per interval, whatever a join/leave storm or a looping client does.
#include <gtest/gtest.h>

#include "gateway/conversation/core/conversation.hpp"
#include "gateway/conversation/core/room_events.hpp"

using namespace chat_outboxd::conv;

namespace {

nlohmann::json
U(int i)
{
	return {{"service", "workers"}, {"sub", "u" + std::to_string(i)}, {"name", nullptr}};
}
std::string
K(int i)
{
	return "workers\tu" + std::to_string(i);
}

} // namespace

TEST(RoomEvents, SmallChatSendsAtOnceUpToTheBurstThenOneFrame)
{
	RoomEvents ev(100);
	size_t now = 0;
	for (int i = 0; i < 30; i++)
		if (!ev.Presence(7, K(i), U(i), true, i + 1).is_null())
			now++;
	EXPECT_EQ(now, RoomEvents::kBurst);
	auto frames = ev.Tick();
	ASSERT_EQ(frames.size(), 1u);
	EXPECT_EQ(frames[0].event, "presence");
	EXPECT_EQ(frames[0].data["online"], 30);
	EXPECT_EQ(frames[0].data["joined"].size(), 30u - RoomEvents::kBurst); // a small chat's frame has every change
	EXPECT_EQ(frames[0].data["more"], false);
	// the next interval starts a burst afresh
	EXPECT_FALSE(ev.Presence(7, K(99), U(99), false, 29).is_null());
}

TEST(RoomEvents, AnImmediateFrameCarriesTheUserAndCount)
{
	RoomEvents ev(100);
	nlohmann::json f = ev.Presence(7, K(1), U(1), true, 1);
	EXPECT_EQ(f["user"], U(1));
	EXPECT_EQ(f["present"], true);
	EXPECT_EQ(f["online"], 1);
	EXPECT_EQ(f["chat_id"], 7);
}

TEST(RoomEvents, BigChatStormIsOneBoundedFramePerInterval)
{
	RoomEvents ev(100);
	// 3,000 joins over 10 intervals: one frame each, at most kBigDiff users per list
	int online = 100;
	size_t frames = 0;
	for (int tick = 0; tick < 10; tick++) {
		for (int i = 0; i < 300; i++) {
			EXPECT_TRUE(ev.Presence(7, K(online), U(online), true, online + 1).is_null());
			online++;
		}
		auto out = ev.Tick();
		ASSERT_EQ(out.size(), 1u);
		frames += out.size();
		EXPECT_EQ(out[0].data["online"], online);
		EXPECT_LE(out[0].data["joined"].size(), RoomEvents::kBigDiff);
		EXPECT_EQ(out[0].data["more"], true);
	}
	EXPECT_EQ(frames, 10u);
	EXPECT_TRUE(ev.Tick().empty());
	EXPECT_TRUE(ev.Idle());
}

TEST(RoomEvents, ComingAndGoingWithinAnIntervalCancels)
{
	RoomEvents ev(1);
	ev.Online(7, 50);
	ev.Presence(7, K(1), U(1), true, 51);
	ev.Presence(7, K(1), U(1), false, 50);
	ev.Presence(7, K(2), U(2), false, 49);
	ev.Presence(7, K(2), U(2), true, 50);
	ev.Presence(7, K(3), U(3), false, 49);
	auto out = ev.Tick();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].data["joined"].size(), 0u);
	ASSERT_EQ(out[0].data["left"].size(), 1u);
	EXPECT_EQ(out[0].data["left"][0], U(3));
	EXPECT_EQ(out[0].data["more"], false);
}

TEST(RoomEvents, ALoopingClientCostsOthersNothingMore)
{
	RoomEvents ev(10);
	ev.Online(7, 500);
	for (int i = 0; i < 10000; i++)
		EXPECT_TRUE(ev.Presence(7, K(1), U(1), i % 2 == 0, 500 + (i % 2 == 0)).is_null());
	auto out = ev.Tick();
	EXPECT_TRUE(out.empty()); // an even number of changes: back where it was, nothing to tell
}

TEST(RoomEvents, HeldUsersAreBounded)
{
	RoomEvents ev(10);
	ev.Online(7, 100000);
	for (int i = 0; i < 5000; i++)
		ev.Presence(7, K(i), U(i), true, 100000 + i);
	auto out = ev.Tick();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].data["joined"].size(), RoomEvents::kBigDiff);
	EXPECT_EQ(out[0].data["more"], true);
}

TEST(RoomEvents, TypingInABigChatIsCoalesced)
{
	RoomEvents ev(100);
	EXPECT_TRUE(ev.Typing(7, K(1), U(1), true)); // unknown size: small, at once
	ev.Online(7, 101);
	EXPECT_TRUE(ev.Big(7));
	for (int i = 0; i < 50; i++)
		EXPECT_FALSE(ev.Typing(7, K(i), U(i), true));
	EXPECT_FALSE(ev.Typing(7, K(3), U(3), false));
	auto out = ev.Tick();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].event, "typing");
	EXPECT_EQ(out[0].data["users"].size(), RoomEvents::kBigDiff);
	EXPECT_EQ(out[0].data["more"], true);
	EXPECT_EQ(out[0].data["users"][3]["user"], U(11)); // by key: u0, u1, u10, u11, ...
	ev.Forget(7);
	EXPECT_FALSE(ev.Big(7));
}

TEST(RoomEvents, ParsePresenceRequest)
{
	PresenceRequest r;
	std::string error;
	ASSERT_TRUE(ParsePresence({{"chat_id", 4}}, &r, &error));
	EXPECT_EQ(r.limit, kPresenceDefaultLimit);
	EXPECT_EQ(r.after, "");
	ASSERT_TRUE(ParsePresence({{"chat_id", 4}, {"after", "workers\tu1"}, {"limit", 5}}, &r, &error));
	EXPECT_EQ(r.after, "workers\tu1");
	EXPECT_EQ(r.limit, 5);
	EXPECT_FALSE(ParsePresence({{"chat_id", 4}, {"limit", 0}}, &r, &error));
	EXPECT_FALSE(ParsePresence({{"chat_id", 4}, {"limit", kPresenceMaxLimit + 1}}, &r, &error));
	EXPECT_FALSE(ParsePresence({{"chat_id", 4}, {"after", 3}}, &r, &error));
	EXPECT_FALSE(ParsePresence({{"chat_id", 4}, {"after", std::string(kPresenceAfterMaxBytes + 1, 'x')}}, &r, &error));
}
