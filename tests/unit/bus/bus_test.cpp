// tests/unit/bus/bus_test.cpp - the bus payload codec and the gateway's one delivery order.
#include <gtest/gtest.h>

#include "bus/core/bus_codec.hpp"
#include "bus/core/bus_order.hpp"

using namespace chat_outboxd;

namespace {

InboxMessage
Row(int64_t seq, std::string body = "b", int64_t chat = 7)
{
	InboxMessage m;
	m.seq = seq;
	m.chat_id = chat;
	m.id = "id-" + std::to_string(seq);
	m.body = std::move(body);
	m.created_at = "2026-01-01T00:00:00+00:00";
	return m;
}

std::vector<int64_t>
Seqs(const std::vector<InboxMessage> &rows)
{
	std::vector<int64_t> out;
	for (const auto &m : rows)
		out.push_back(m.seq);
	return out;
}

using V = std::vector<int64_t>;

} // namespace

TEST(BusCodec, RoundTripsRowsAndTurnsLargeRowsIntoNotices)
{
	std::string big(kBusRowBytes + 1, 'x');
	std::string odd("a\nb r 1 2 3\0z", 13);
	InboxMessage with_sender = Row(8, "from alice");
	with_sender.sender = std::string("al ice\n1 2", 11);
	auto payloads = EncodeBus({Row(5, odd, -3), Row(6, big), Row(7, ""), with_sender}, 1234);
	ASSERT_EQ(payloads.size(), 1u);
	auto p = DecodeBus(payloads[0]);
	ASSERT_TRUE(p);
	EXPECT_EQ(p->published_ms, 1234);
	ASSERT_EQ(p->entries.size(), 4u);
	EXPECT_FALSE(p->entries[0].message.sender.has_value()); // sent without one: still an `r` row
	EXPECT_EQ(payloads[0].find("\ns "), payloads[0].rfind("\ns "));
	EXPECT_EQ(p->entries[3].message.sender, with_sender.sender);
	EXPECT_EQ(p->entries[3].message.body, "from alice");
	EXPECT_FALSE(p->entries[0].notice);
	EXPECT_EQ(p->entries[0].message.body, odd);
	EXPECT_EQ(p->entries[0].message.chat_id, -3);
	EXPECT_EQ(p->entries[0].message.id, "id-5");
	EXPECT_EQ(p->entries[0].message.created_at, "2026-01-01T00:00:00+00:00");
	EXPECT_TRUE(p->entries[1].notice);
	EXPECT_EQ(p->entries[1].message.seq, 6);
	EXPECT_EQ(p->entries[1].message.chat_id, 7);
	EXPECT_EQ(p->entries[2].message.body, "");
}

TEST(BusCodec, EditsAndDeletesGoAsNotices)
{
	// The `r` and `s` rows have no place for a change: an edit, a delete, and a message that came
	// already edited go as notices, which every gateway reads from the inbox.
	InboxMessage edit = Row(9, "new"), deleted = Row(10, ""), edited_message = Row(11, "new");
	edit.change = Change::Edited;
	edit.target = "id-1";
	deleted.change = Change::Deleted;
	deleted.target = "id-1";
	edited_message.edited_at = "2026-01-01T00:00:01+00:00";
	auto payloads = EncodeBus({edit, deleted, edited_message, Row(12)}, 1);
	ASSERT_EQ(payloads.size(), 1u);
	auto p = DecodeBus(payloads[0]);
	ASSERT_TRUE(p);
	ASSERT_EQ(p->entries.size(), 4u);
	EXPECT_TRUE(p->entries[0].notice);
	EXPECT_TRUE(p->entries[1].notice);
	EXPECT_TRUE(p->entries[2].notice);
	EXPECT_FALSE(p->entries[3].notice);
	EXPECT_EQ(p->entries[1].message.seq, 10);
}

TEST(BusCodec, SplitsPayloadsAndRefusesGarbage)
{
	std::vector<InboxMessage> rows;
	for (int i = 1; i <= 10; i++)
		rows.push_back(Row(i, std::string(kBusRowBytes - 100, 'y')));
	auto payloads = EncodeBus(rows, 1);
	EXPECT_GT(payloads.size(), 1u);
	size_t n = 0;
	for (auto &s : payloads) {
		EXPECT_LE(s.size(), kBusPayloadBytes + kBusRowBytes + 100);
		n += DecodeBus(s)->entries.size();
	}
	EXPECT_EQ(n, 10u);
	EXPECT_FALSE(DecodeBus(""));
	EXPECT_FALSE(DecodeBus("hello"));
	EXPECT_FALSE(DecodeBus("cobus1 x\n"));
	EXPECT_FALSE(DecodeBus("cobus1 1\nr 1 2 3 0 0\nab")); // shorter than it says
	EXPECT_FALSE(DecodeBus("cobus1 1\nn 0 2\n"));         // seq starts at 1
	EXPECT_FALSE(DecodeBus("cobus1 1\nq 1 2\n"));
	EXPECT_FALSE(DecodeBus("cobus1 1\ns 1 2 0 0 0\n"));     // an `s` row names its sender's length
	EXPECT_FALSE(DecodeBus("cobus1 1\ns 1 2 0 0 0 3\nab")); // shorter than it says
	EXPECT_TRUE(DecodeBus("cobus1 1\n"));
}

TEST(BusOrder, HandsOnInOrderOnceAndBuffersAGap)
{
	BusOrder o(1 << 20, 100);
	EXPECT_TRUE(o.Offer({Row(11)}, 0).empty()); // before Start: kept
	EXPECT_EQ(Seqs(o.Start(10, 0)), V{11});
	EXPECT_EQ(Seqs(o.Offer({Row(12), Row(12), Row(11)}, 0)), V{12});
	EXPECT_EQ(Seqs(o.Offer({Row(14)}, 0)), V{});
	EXPECT_EQ(o.GetState(), BusOrder::State::Grace);
	EXPECT_FALSE(o.TakeFill(50));
	EXPECT_EQ(Seqs(o.Offer({Row(13)}, 60)), (V{13, 14})); // the missing row came in the grace
	EXPECT_EQ(o.GetState(), BusOrder::State::InOrder);
	EXPECT_FALSE(o.TakeFill(1000));
}

TEST(BusOrder, StartsFromTheFirstRowSeenBeforeTheStart)
{
	BusOrder o(1 << 20, 100);
	EXPECT_TRUE(o.Offer({Row(5), Row(7)}, 0).empty());
	EXPECT_EQ(Seqs(o.Start(9, 0)), V{5}); // 5..9 committed: 5 handed on, 6..9 read now
	auto f = o.TakeFill(0);
	ASSERT_TRUE(f);
	EXPECT_EQ(f->after, 5);
	EXPECT_EQ(f->upto, 9);
	EXPECT_EQ(Seqs(o.Filled(*f, {Row(6), Row(7), Row(8), Row(9)}, true, 0)), (V{6, 7, 8, 9}));
}

TEST(BusOrder, FillsAGapThatDoesNotCloseHolesIncluded)
{
	BusOrder o(1 << 20, 100);
	o.Start(0, 0);
	EXPECT_EQ(Seqs(o.Offer({Row(1), Row(4), Row(6)}, 0)), V{1});
	auto f = o.TakeFill(100);
	ASSERT_TRUE(f);
	EXPECT_EQ(f->after, 1);
	EXPECT_EQ(f->upto, 6);
	EXPECT_EQ(o.GetState(), BusOrder::State::Filling);
	EXPECT_EQ(Seqs(o.Offer({Row(7)}, 110)), V{}); // during the fill: buffered
	// The inbox has 2, 4, 6 (3 and 5 rolled back): a complete answer.
	EXPECT_EQ(Seqs(o.Filled(*f, {Row(2), Row(4), Row(6)}, true, 120)), (V{2, 4, 6, 7}));
	EXPECT_EQ(o.Last(), 7);
	EXPECT_EQ(o.GetState(), BusOrder::State::InOrder);
}

TEST(BusOrder, PagesAFillAndRetriesAFailedOne)
{
	BusOrder o(1 << 20, 100);
	o.Start(0, 0);
	o.Notice(5, 0); // e.g. the inbox's max(seq) after a resubscribe: no grace
	auto f = o.TakeFill(0);
	ASSERT_TRUE(f);
	o.FillFailed(0, 1000);
	EXPECT_FALSE(o.TakeFill(999));
	f = o.TakeFill(1000);
	ASSERT_TRUE(f);
	EXPECT_EQ(Seqs(o.Filled(*f, {Row(1), Row(2)}, false, 1000)), (V{1, 2})); // a full page
	f = o.TakeFill(1000);
	ASSERT_TRUE(f);
	EXPECT_EQ(f->after, 2);
	EXPECT_EQ(Seqs(o.Filled(*f, {Row(3), Row(5)}, true, 1000)), (V{3, 5}));
	EXPECT_EQ(o.Last(), 5);
	EXPECT_FALSE(o.TakeFill(5000));
	o.Notice(5, 5000); // nothing new
	EXPECT_FALSE(o.TakeFill(5000));
}

// A fill that failed because the gateway's Postgres connection was down waits for its retry; when the
// connection is back, the fill is due at once, not at the end of the retry delay (after a Postgres
// failover that delay was up to a second of silence on every client of the gateway).
TEST(BusOrder, AFailedFillIsDueAtOnceWhenPostgresIsBack)
{
	BusOrder o(1 << 20, 100);
	o.Start(0, 0);
	o.Notice(5, 0);
	auto f = o.TakeFill(0);
	ASSERT_TRUE(f);
	o.FillFailed(0, 1000);
	EXPECT_FALSE(o.TakeFill(10));
	o.RetryNow(10);
	f = o.TakeFill(10);
	ASSERT_TRUE(f);
	EXPECT_EQ(f->after, 0);
	EXPECT_EQ(f->upto, 5);
	EXPECT_EQ(Seqs(o.Filled(*f, {Row(1), Row(5)}, true, 10)), (V{1, 5}));
	o.RetryNow(20); // nothing failed: nothing to read
	EXPECT_FALSE(o.TakeFill(20));
}

// A gap that only waits its grace (the bus and a consumer race) keeps its grace across a reconnect.
TEST(BusOrder, ARetryNowLeavesAGapsGraceAlone)
{
	BusOrder o(1 << 20, 100);
	o.Start(0, 0);
	EXPECT_TRUE(o.Offer({Row(2)}, 0).empty());
	o.RetryNow(10);
	EXPECT_FALSE(o.TakeFill(10));
	EXPECT_TRUE(o.TakeFill(100));
}

TEST(BusOrder, DropsTheBufferPastItsBoundAndReadsItAgain)
{
	BusOrder o(10, 100);
	o.Start(0, 0);
	EXPECT_TRUE(o.Offer({Row(2, "123456"), Row(3, "123456")}, 0).empty());
	EXPECT_EQ(o.BufferedBytes(), 0u);
	EXPECT_EQ(o.Overflows(), 1u);
	auto f = o.TakeFill(100);
	ASSERT_TRUE(f);
	EXPECT_EQ(f->upto, 3);
	EXPECT_EQ(Seqs(o.Filled(*f, {Row(1), Row(2), Row(3)}, true, 100)), (V{1, 2, 3}));
}
