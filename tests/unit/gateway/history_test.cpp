// tests/unit/gateway/history_test.cpp - history pages (daemon/src/gateway/conversation/core/history.hpp): two kinds of
// messages merged newest first, each taken as a prefix, so paging on from `next` skips and repeats none.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "gateway/conversation/core/history.hpp"

using namespace chat_outboxd;

namespace {

HistoryRow
In(int64_t seq, int64_t t, size_t bytes = 1)
{
	HistoryRow r;
	r.id = "in-" + std::to_string(seq);
	r.chat_id = 7;
	r.body = std::string(bytes, 'x');
	r.created_at = "2026-12-01T00:00:00." + std::to_string(t);
	r.seq = seq;
	r.time_us = t;
	return r;
}

HistoryRow
Out(const std::string &id, int64_t t, size_t bytes = 1)
{
	HistoryRow r;
	r.id = id;
	r.chat_id = 7;
	r.body = std::string(bytes, 'y');
	r.created_at = "2026-12-01T00:00:00." + std::to_string(t);
	r.time_us = t;
	return r;
}

// A store of both kinds and the queries the gateway runs against it: rows before the cursor, newest
// first, at most limit+1 of them and cut at the row crossing max_bytes.
struct Store {
	std::vector<HistoryRow> in, out; // any order

	HistoryKind Fetch(bool received, const conv::HistoryRequest &req, size_t max_bytes) const
	{
		std::vector<HistoryRow> rows;
		for (const HistoryRow &r : received ? in : out) {
			if (received ? (!req.before_seq || r.seq < *req.before_seq)
			             : (!req.before_sent || std::make_pair(*r.created_at, r.id) <
			                                        std::make_pair(req.before_sent->created_at, req.before_sent->id)))
				rows.push_back(r);
		}
		std::sort(rows.begin(), rows.end(), [&](const HistoryRow &a, const HistoryRow &b) {
			return received ? a.seq > b.seq : std::make_pair(*a.created_at, a.id) > std::make_pair(*b.created_at, b.id);
		});
		size_t n = std::min<size_t>(rows.size(), static_cast<size_t>(req.limit) + 1), bytes = 0, keep = 0;
		while (keep < n && bytes < max_bytes)
			bytes += rows[keep++].body.size();
		HistoryKind k;
		k.complete = rows.size() <= static_cast<size_t>(req.limit) && keep == n;
		k.rows.assign(rows.begin(), rows.begin() + keep);
		return k;
	}
};

std::vector<std::string>
Ids(const HistoryPage &p)
{
	std::vector<std::string> ids;
	for (const auto &m : p.messages)
		ids.push_back(m["id"]);
	return ids;
}

} // namespace

TEST(History, MergesNewestFirstAndSaysWhereEachKindGoesOn)
{
	Store s{{In(1, 10), In(2, 30), In(3, 50)}, {Out("a", 20), Out("b", 40)}};
	s.in[2].sender = "alice";
	conv::HistoryRequest req;
	req.limit = 3;
	HistoryPage p = MergeHistory(req, s.Fetch(true, req, 1000), s.Fetch(false, req, 1000), 1000);
	EXPECT_EQ(Ids(p), (std::vector<std::string>{"in-3", "b", "in-2"}));
	EXPECT_EQ(p.next_before_seq, 2);
	ASSERT_TRUE(p.next_before_sent);
	EXPECT_EQ(p.next_before_sent->id, "b");
	EXPECT_TRUE(p.more);
	EXPECT_EQ(p.messages[0]["dir"], "in");
	EXPECT_EQ(p.messages[1]["dir"], "out");
	EXPECT_TRUE(p.messages[1]["seq"].is_null());
	EXPECT_EQ(p.messages[0]["sender"], "alice");
	EXPECT_TRUE(p.messages[1]["sender"].is_null()); // sent without one

	req.before_seq = p.next_before_seq;
	req.before_sent = p.next_before_sent;
	p = MergeHistory(req, s.Fetch(true, req, 1000), s.Fetch(false, req, 1000), 1000);
	EXPECT_EQ(Ids(p), (std::vector<std::string>{"a", "in-1"}));
	EXPECT_FALSE(p.more);
}

TEST(History, AKindNotReturnedKeepsItsCursor)
{
	Store s{{In(5, 100), In(6, 200)}, {Out("old", 1)}};
	conv::HistoryRequest req;
	req.limit = 2;
	HistoryPage p = MergeHistory(req, s.Fetch(true, req, 1000), s.Fetch(false, req, 1000), 1000);
	EXPECT_EQ(Ids(p), (std::vector<std::string>{"in-6", "in-5"}));
	EXPECT_FALSE(p.next_before_sent); // still "from the newest": nothing sent was consumed
	EXPECT_TRUE(p.more);
	EXPECT_EQ(HistoryResult(7, p)["next"]["before_sent"], nullptr);
}

TEST(History, BytesEndAPageAfterTheRowThatCrossesThem)
{
	Store s{{In(1, 1, 600), In(2, 2, 600), In(3, 3, 600)}, {}};
	conv::HistoryRequest req;
	req.limit = 50;
	HistoryPage p = MergeHistory(req, s.Fetch(true, req, 1000), s.Fetch(false, req, 1000), 1000);
	EXPECT_EQ(Ids(p), (std::vector<std::string>{"in-3", "in-2"}));
	EXPECT_TRUE(p.more);
	// A single row larger than the bound still makes a page.
	p = MergeHistory(req, s.Fetch(true, req, 100), s.Fetch(false, req, 100), 100);
	EXPECT_EQ(Ids(p), (std::vector<std::string>{"in-3"}));
}

TEST(History, ACutKindIsNotOvertaken)
{
	// The received kind is cut by bytes after one row; the sent rows older than it must wait.
	HistoryKind in{{In(9, 100, 10)}, false};
	HistoryKind out{{Out("x", 50), Out("y", 40)}, true};
	conv::HistoryRequest req;
	req.limit = 10;
	HistoryPage p = MergeHistory(req, in, out, 1000);
	EXPECT_EQ(Ids(p), (std::vector<std::string>{"in-9"}));
	EXPECT_TRUE(p.more);
}

// Random stores paged to the end with random limits and byte bounds: every message exactly once.
TEST(History, PagingToTheEndGivesEveryMessageOnce)
{
	std::mt19937 rng(15);
	for (int round = 0; round < 300; round++) {
		Store s;
		int n_in = rng() % 40, n_out = rng() % 40;
		for (int k = 1; k <= n_in; k++)
			s.in.push_back(In(k * 3, rng() % 50, 1 + rng() % 300)); // times need not follow seq
		for (int k = 0; k < n_out; k++)
			s.out.push_back(Out("o" + std::to_string(1000 + k), rng() % 50, 1 + rng() % 300));
		conv::HistoryRequest req;
		req.limit = 1 + rng() % 7;
		size_t max_bytes = 1 + rng() % 900;
		std::multiset<std::string> seen;
		for (int page = 0; page < 200; page++) {
			HistoryPage p = MergeHistory(req, s.Fetch(true, req, max_bytes), s.Fetch(false, req, max_bytes), max_bytes);
			ASSERT_FALSE(p.messages.empty() && p.more) << "round " << round;
			for (const auto &id : Ids(p))
				seen.insert(id);
			if (!p.more)
				break;
			req.before_seq = p.next_before_seq;
			req.before_sent = p.next_before_sent;
		}
		ASSERT_EQ(seen.size(), static_cast<size_t>(n_in + n_out)) << "round " << round;
		for (const auto &id : seen)
			ASSERT_EQ(seen.count(id), 1u) << id;
	}
}
