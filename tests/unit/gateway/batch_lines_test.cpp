// tests/unit/gateway/batch_lines_test.cpp - the lines that make many clients' equal reads one
// (gateway/hub/core/batch_lines.hpp): one read in flight per key, the members that come meanwhile wait for
// the next, a batch is capped in members and bytes (a huge line is read in parts, oldest first, and a member
// over the byte cap alone still moves), members gone are dropped, and nothing stays behind a finished key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gateway/hub/core/batch_lines.hpp"

using namespace chat_outboxd;

namespace {
struct LineJoiner {
	int id;
	size_t bytes = 1;
	bool gone = false;
};
auto KeepJoiner = [](const LineJoiner &j) { return !j.gone; };
auto JoinerWeight = [](const LineJoiner &j) { return j.bytes; };

std::vector<int>
LineIds(const std::vector<LineJoiner> &v)
{
	std::vector<int> out;
	for (const LineJoiner &j : v)
		out.push_back(j.id);
	return out;
}
} // namespace

TEST(BatchLines, OneReadInFlightPerKeyTheRestWaitForTheNext)
{
	BatchLines<int64_t, LineJoiner> lines;
	lines.Add(7, {1});
	auto k = lines.NextReady();
	ASSERT_TRUE(k.has_value());
	EXPECT_EQ(*k, 7);
	EXPECT_EQ(LineIds(lines.Take(7, 100, 1000, KeepJoiner, JoinerWeight)), std::vector<int>{1});
	EXPECT_TRUE(lines.Reading(7));
	// a storm comes while the first read is out: none is ready, all wait
	for (int i = 2; i <= 200; i++)
		lines.Add(7, {i});
	EXPECT_FALSE(lines.NextReady().has_value());
	EXPECT_EQ(lines.Waiting(7), 199u);
	lines.Done(7);
	k = lines.NextReady();
	ASSERT_TRUE(k.has_value());
	std::vector<LineJoiner> batch = lines.Take(7, 1000, 1000000, KeepJoiner, JoinerWeight);
	ASSERT_EQ(batch.size(), 199u); // the second read serves all of them
	EXPECT_EQ(batch.front().id, 2);
	EXPECT_EQ(batch.back().id, 200);
	lines.Done(7);
	EXPECT_FALSE(lines.NextReady().has_value());
	EXPECT_EQ(lines.Keys(), 0u); // nothing stays behind
}

TEST(BatchLines, KeysAreIndependentAndReadyOldestFirst)
{
	BatchLines<std::vector<int64_t>, LineJoiner> lines;
	lines.Add({1, 2}, {1});
	lines.Add({3}, {2});
	lines.Add({1, 2}, {3});
	auto a = lines.NextReady(), b = lines.NextReady();
	ASSERT_TRUE(a && b);
	EXPECT_EQ(*a, (std::vector<int64_t>{1, 2}));
	EXPECT_EQ(*b, (std::vector<int64_t>{3}));
	EXPECT_FALSE(lines.NextReady().has_value());
	EXPECT_EQ(LineIds(lines.Take(*a, 10, 10, KeepJoiner, JoinerWeight)), (std::vector<int>{1, 3}));
	EXPECT_EQ(LineIds(lines.Take(*b, 10, 10, KeepJoiner, JoinerWeight)), std::vector<int>{2});
	lines.Done(*b);
	lines.Done(*a);
	EXPECT_EQ(lines.Keys(), 0u);
}

TEST(BatchLines, CapsSplitAHugeLineOldestFirst)
{
	BatchLines<int64_t, LineJoiner> lines;
	for (int i = 0; i < 2500; i++)
		lines.Add(1, {i});
	std::vector<int> seen;
	int reads = 0;
	while (auto k = lines.NextReady()) {
		std::vector<LineJoiner> batch = lines.Take(*k, 1000, 1000000, KeepJoiner, JoinerWeight);
		EXPECT_LE(batch.size(), 1000u);
		for (int id : LineIds(batch))
			seen.push_back(id);
		reads++;
		lines.Done(*k);
	}
	EXPECT_EQ(reads, 3);
	ASSERT_EQ(seen.size(), 2500u);
	for (int i = 0; i < 2500; i++)
		EXPECT_EQ(seen[i], i);
	// by bytes: 10 of 100 bytes each fit 1000; one of 5000 goes alone (a line always moves)
	for (int i = 0; i < 12; i++)
		lines.Add(2, {i, 100});
	lines.Add(2, {99, 5000});
	auto k = lines.NextReady();
	EXPECT_EQ(lines.Take(*k, 1000, 1000, KeepJoiner, JoinerWeight).size(), 10u);
	lines.Done(*k);
	k = lines.NextReady();
	EXPECT_EQ(LineIds(lines.Take(*k, 1000, 1000, KeepJoiner, JoinerWeight)), (std::vector<int>{10, 11}));
	lines.Done(*k);
	k = lines.NextReady();
	EXPECT_EQ(LineIds(lines.Take(*k, 1000, 1000, KeepJoiner, JoinerWeight)), std::vector<int>{99});
	lines.Done(*k);
	EXPECT_EQ(lines.Keys(), 0u);
}

TEST(BatchLines, MembersGoneAreDropped)
{
	BatchLines<int64_t, LineJoiner> lines;
	lines.Add(5, {1, 1, true});
	lines.Add(5, {2});
	lines.Add(5, {3, 1, true});
	auto k = lines.NextReady();
	EXPECT_EQ(LineIds(lines.Take(*k, 1, 100, KeepJoiner, JoinerWeight)), std::vector<int>{2});
	lines.Done(*k);
	// only gone members left: the read takes none, and Done forgets the key
	k = lines.NextReady();
	ASSERT_TRUE(k.has_value());
	EXPECT_TRUE(lines.Take(*k, 10, 100, KeepJoiner, JoinerWeight).empty());
	lines.Done(*k);
	EXPECT_EQ(lines.Keys(), 0u);
	EXPECT_FALSE(lines.NextReady().has_value());
}
