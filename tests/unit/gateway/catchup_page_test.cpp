// tests/unit/gateway/catchup_page_test.cpp - one replay page handed to many clients
// (gateway/hub/core/catchup_page.hpp): each client gets the rows above its own cursor, in order; a full or cut
// page moves every client's cursor to the page's last row and a complete one ends every replay; a client whose
// cursor is past the page gets nothing and keeps its cursor. A storm of clients at random cursors, paged
// together, gets exactly the rows above each one's cursor, once each and in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "gateway/hub/core/catchup_page.hpp"

using namespace chat_outboxd;

TEST(CatchupPage, EachClientFromItsOwnCursor)
{
	CatchupPage p(10, {11, 13, 17, 20}, true);
	EXPECT_EQ(p.FirstFor(10), 0u);
	EXPECT_EQ(p.FirstFor(12), 1u);
	EXPECT_EQ(p.FirstFor(13), 2u);
	EXPECT_EQ(p.FirstFor(20), 4u);
	EXPECT_EQ(p.FirstFor(25), 4u);
	EXPECT_EQ(p.Last(), 20);
	EXPECT_EQ(p.CursorAfter(12), 20);
	EXPECT_EQ(p.CursorAfter(25), 25); // past the page: nothing, and its cursor stays
	CatchupPage empty(30, {}, false);
	EXPECT_EQ(empty.Last(), 30);
	EXPECT_EQ(empty.FirstFor(30), 0u);
	EXPECT_EQ(empty.CursorAfter(40), 40);
	std::vector<int64_t> cursors{40, 7, 12};
	EXPECT_EQ(CatchupPage::LowestCursor(cursors.begin(), cursors.end(), [](int64_t c) { return c; }), 7);
}

// The replay of many clients of one chat, paged together as Catchup does: a page of at most `limit` rows of
// the inbox above the lowest cursor of the clients still replaying.
TEST(CatchupPage, ManyClientsPagedTogetherGetExactlyTheirRows)
{
	std::mt19937 rng(38);
	std::vector<int64_t> inbox;
	for (int64_t s = 1; s <= 500; s++)
		if (rng() % 3)
			inbox.push_back(s); // gaps: other chats' seqs
	const int64_t limit = 25;
	struct Client {
		int64_t cursor, since;
		std::vector<int64_t> got;
		bool done = false;
	};
	std::vector<Client> clients;
	for (int i = 0; i < 300; i++) {
		int64_t since = static_cast<int64_t>(rng() % 520);
		clients.push_back({since, since, {}, false});
	}
	int reads = 0;
	while (true) {
		std::vector<Client *> line;
		for (Client &c : clients)
			if (!c.done)
				line.push_back(&c);
		if (line.empty())
			break;
		int64_t from = CatchupPage::LowestCursor(line.begin(), line.end(), [](Client *c) { return c->cursor; });
		std::vector<int64_t> rows;
		for (int64_t s : inbox)
			if (s > from && static_cast<int64_t>(rows.size()) < limit)
				rows.push_back(s);
		bool more = static_cast<int64_t>(rows.size()) >= limit;
		CatchupPage p(from, rows, more);
		reads++;
		for (Client *c : line) {
			for (size_t i = p.FirstFor(c->cursor); i < rows.size(); i++)
				c->got.push_back(rows[i]);
			c->cursor = p.CursorAfter(c->cursor);
			c->done = !p.More();
		}
	}
	for (const Client &c : clients) {
		std::vector<int64_t> want;
		for (int64_t s : inbox)
			if (s > c.since)
				want.push_back(s);
		EXPECT_EQ(c.got, want) << "since " << c.since;
	}
	// the pages of the lowest cursor, not 300 clients' own
	EXPECT_LE(reads, static_cast<int>(inbox.size() / limit) + 2);
}
