// tests/unit/net/query_order_test.cpp - the order a connection answers its queries in when one is put
// ahead of those waiting (daemon/src/net/core/query_order.hpp, PgClient::QueryFirst).
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "net/core/query_order.hpp"

using namespace chat_outboxd;

namespace {

// Line drives a line of named queries as PgClient does: Send marks the front out, Answer reads its
// answer (pops it) and sends the next; Drain answers everything and gives the order of the answers.
struct Line {
	std::deque<std::string> queue;
	bool out = false;
	void Query(const std::string &q)
	{
		queue.push_back(q);
		Send();
	}
	void QueryFirst(const std::string &q)
	{
		InsertAhead(queue, out, q);
		Send();
	}
	void Send()
	{
		if (!queue.empty())
			out = true;
	}
	std::string Answer()
	{
		std::string q = queue.front();
		queue.pop_front();
		out = false;
		Send();
		return q;
	}
	std::vector<std::string> Drain()
	{
		std::vector<std::string> order;
		while (!queue.empty())
			order.push_back(Answer());
		return order;
	}
};

} // namespace

TEST(QueryOrder, FirstOnAnIdleConnectionIsSentAtOnce)
{
	Line l;
	l.QueryFirst("members");
	EXPECT_TRUE(l.out);
	EXPECT_EQ(l.Drain(), (std::vector<std::string>{"members"}));
}

TEST(QueryOrder, FirstGoesAheadOfTheWaitingButNeverAheadOfTheOneOut)
{
	Line l;
	l.Query("state1"); // out
	l.Query("state2");
	l.Query("state3");
	l.QueryFirst("members");
	EXPECT_EQ(l.Drain(), (std::vector<std::string>{"state1", "members", "state2", "state3"}));
}

TEST(QueryOrder, WithNothingOutFirstGoesToTheFront)
{
	std::deque<int> q{2, 3};
	InsertAhead(q, false, 1);
	EXPECT_EQ(q, (std::deque<int>{1, 2, 3}));
	std::deque<int> empty;
	InsertAhead(empty, true, 1); // "out" with nothing in line: nothing to stay behind
	EXPECT_EQ(empty, (std::deque<int>{1}));
}

TEST(QueryOrder, QueriesAfterTheFirstOneKeepTheirOrderBehindIt)
{
	Line l;
	l.Query("state1");
	l.QueryFirst("members1");
	l.Query("state2");
	EXPECT_EQ(l.Answer(), "state1");
	l.Query("state3");
	EXPECT_EQ(l.Answer(), "members1");
	// the next batch is put ahead once the first one answered, as Membership does: state2 went out
	// with that answer, so the batch is next after it
	l.QueryFirst("members2");
	EXPECT_EQ(l.Drain(), (std::vector<std::string>{"state2", "members2", "state3"}));
}

TEST(QueryOrder, TwoPutAheadTogetherAreAnsweredLastInFirst)
{
	Line l;
	l.Query("state1");
	l.Query("state2");
	l.QueryFirst("a");
	l.QueryFirst("b");
	EXPECT_EQ(l.Drain(), (std::vector<std::string>{"state1", "b", "a", "state2"}));
}

TEST(QueryOrder, AStormOfWaitingQueriesDelaysTheFirstByOneQueryOnly)
{
	Line l;
	for (int i = 0; i < 1000; i++)
		l.Query("state" + std::to_string(i));
	l.QueryFirst("members");
	auto order = l.Drain();
	ASSERT_EQ(order.size(), 1001u);
	EXPECT_EQ(order[0], "state0");
	EXPECT_EQ(order[1], "members");
	EXPECT_EQ(order[1000], "state999");
}
