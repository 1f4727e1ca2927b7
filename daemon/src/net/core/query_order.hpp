// daemon/src/net/core/query_order.hpp - where a query goes in a connection's line of waiting queries.
//
// A connection sends one query at a time: the query out is the line's front until its answer is read
// (a prepared statement's PREPARE counts as its query being out). A query put ahead (PgClient::
// QueryFirst) goes ahead of every query still waiting and never ahead of the one out, whose answer
// is the next one the connection reads.
#pragma once

#include <iterator>
#include <utility>

namespace chat_outboxd {

// InsertAhead puts item in line, ahead of every waiting entry and behind the front when the front
// is out. Two items put ahead one after the other are answered last-in first: the callers keep at
// most one such query out at a time, so the queries they overtake are delayed, never starved.
template <class Line, class T>
void
InsertAhead(Line &line, bool front_is_out, T &&item)
{
	auto at = line.begin();
	if (front_is_out && at != line.end())
		at = std::next(at);
	line.insert(at, std::forward<T>(item));
}

} // namespace chat_outboxd
