// tests/unit/consumer/inbox_push_test.cpp - which inbox rows a write pushes to clients.
#include <gtest/gtest.h>

#include "consumer/core/inbox_push.hpp"

using namespace chat_outboxd;

namespace {

InboxMessage
M(const char *id, int64_t seq)
{
	InboxMessage m;
	m.id = id;
	m.seq = seq;
	return m;
}

std::vector<int64_t>
Seqs(const std::vector<InboxMessage> &v)
{
	std::vector<int64_t> out;
	for (const auto &m : v)
		out.push_back(m.seq);
	return out;
}

} // namespace

TEST(InboxPush, NewRowsOnly)
{
	InboxRows r;
	r.inserted = {M("a", 11), M("b", 12)};
	EXPECT_EQ(Seqs(RowsToPush(std::move(r), 10)), (std::vector<int64_t>{11, 12}));
}

TEST(InboxPush, RowsAnotherWriterCommittedComeFirst)
{
	// Another writer committed two of the batch's messages and one of its own before this write:
	// they are below the new rows and nobody pushed them to this daemon's clients.
	InboxRows r;
	r.inserted = {M("c", 16), M("d", 17)};
	r.existing = {M("a", 11), M("b", 12)};
	r.others = {M("z", 13)};
	EXPECT_EQ(Seqs(RowsToPush(std::move(r), 10)), (std::vector<int64_t>{11, 12, 13, 16, 17}));
}

TEST(InboxPush, DuplicatesAlreadyPushedStayBehind)
{
	InboxRows r;
	r.existing = {M("a", 4), M("b", 12)};
	EXPECT_EQ(Seqs(RowsToPush(std::move(r), 10)), (std::vector<int64_t>{12}));
}

TEST(InboxPush, EachSeqOnce)
{
	// a batch written one message at a time: a later write sees an earlier one's row as another writer's
	InboxRows r;
	r.inserted = {M("a", 11)};
	InboxRows second;
	second.inserted = {M("b", 12)};
	second.others = {M("a", 11)};
	r.Add(std::move(second));
	EXPECT_EQ(Seqs(RowsToPush(std::move(r), 10)), (std::vector<int64_t>{11, 12}));
}

TEST(InboxPush, StopsWhereOtherWritersRowsWereCut)
{
	InboxRows r;
	r.inserted = {M("n", 90)};
	r.others = {M("o1", 20), M("o2", 21)};
	r.read_up_to = 21;
	EXPECT_EQ(Seqs(RowsToPush(std::move(r), 10)), (std::vector<int64_t>{20, 21}));
}
