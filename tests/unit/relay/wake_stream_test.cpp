// tests/unit/relay/wake_stream_test.cpp - the logical wake-up's protocol (relay/src/core/wake_stream).
#include <gtest/gtest.h>

#include <string>

#include "core/wake_stream.hpp"

using namespace chat_outbox::relay;

namespace {

std::string
U64(uint64_t v)
{
	std::string s;
	for (int i = 7; i >= 0; i--)
		s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
	return s;
}

// XLogData carrying one pgoutput message, at WAL positions start..end
std::string
XLog(uint64_t start, uint64_t end, const std::string &pgoutput)
{
	return "w" + U64(start) + U64(end) + U64(0) + pgoutput;
}

std::string
Message(const std::string &prefix)
{
	return std::string("M") + '\1' + U64(0x100) + prefix + '\0' + std::string("\0\0\0\0", 4);
}

WakeEvent
Feed(WakeStream *s, const std::string &m)
{
	return s->OnCopyData(m.data(), m.size());
}

} // namespace

TEST(WakeStream, CommitOfATransactionWithOurMessageWakes)
{
	WakeStream s;
	EXPECT_EQ(Feed(&s, XLog(10, 10, "B" + std::string(20, '\0'))), WakeEvent::kNone);
	EXPECT_EQ(Feed(&s, XLog(11, 11, Message(kWakePrefix))), WakeEvent::kNone);
	EXPECT_EQ(Feed(&s, XLog(12, 20, "C" + std::string(25, '\0'))), WakeEvent::kWake);
	EXPECT_EQ(s.Received(), 20u);
}

TEST(WakeStream, OtherPrefixesAndEmptyTransactionsDoNotWake)
{
	WakeStream s;
	Feed(&s, XLog(10, 10, "B"));
	Feed(&s, XLog(11, 11, Message("someone_else")));
	EXPECT_EQ(Feed(&s, XLog(12, 12, "C")), WakeEvent::kNone);
	Feed(&s, XLog(13, 13, "B"));
	EXPECT_EQ(Feed(&s, XLog(14, 14, "C")), WakeEvent::kNone);
	// a prefix that only starts like ours
	Feed(&s, XLog(15, 15, "B"));
	Feed(&s, XLog(16, 16, Message(std::string(kWakePrefix) + "_x")));
	EXPECT_EQ(Feed(&s, XLog(17, 17, "C")), WakeEvent::kNone);
}

TEST(WakeStream, KeepaliveAdvancesAndMayAskForAReply)
{
	WakeStream s;
	EXPECT_EQ(Feed(&s, "k" + U64(500) + U64(0) + std::string(1, '\0')), WakeEvent::kNone);
	EXPECT_EQ(s.Received(), 500u);
	EXPECT_EQ(Feed(&s, "k" + U64(400) + U64(0) + std::string(1, '\1')), WakeEvent::kReplyNow);
	EXPECT_EQ(s.Received(), 500u); // never goes back
}

TEST(WakeStream, TruncatedOrUnknownMessagesAreRefused)
{
	WakeStream s;
	EXPECT_EQ(Feed(&s, ""), WakeEvent::kBad);
	EXPECT_EQ(Feed(&s, "k" + U64(1)), WakeEvent::kBad);
	EXPECT_EQ(Feed(&s, "w" + U64(1)), WakeEvent::kBad);
	EXPECT_EQ(Feed(&s, "x123"), WakeEvent::kBad);
	std::string unterminated = std::string("M") + '\1' + U64(1) + "chat_outbox_relay";
	EXPECT_EQ(Feed(&s, XLog(1, 1, unterminated)), WakeEvent::kBad);
}

TEST(WakeStream, StandbyStatusReportsThePositionThreeTimes)
{
	std::string m = StandbyStatus(0x0102030405060708ull, 42);
	ASSERT_EQ(m.size(), 34u);
	EXPECT_EQ(m[0], 'r');
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(m.substr(1 + 8 * i, 8), U64(0x0102030405060708ull));
	EXPECT_EQ(m.substr(25, 8), U64(42));
	EXPECT_EQ(m[33], '\0');
	EXPECT_EQ(PgEpochMicros(946684800000000), 0);
}

TEST(WakeStream, SlotNamesAreValidSlotNames)
{
	std::string n = SlotName(12345, 0xdeadbeef);
	EXPECT_EQ(n, "chat_outbox_wake_12345_deadbeef");
	EXPECT_LE(n.size(), 63u);
	for (char c : n)
		EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << n;
}
